#!/usr/bin/env python3
"""A Python harness's retry loop under idemproof client-check (standard library only).

    idemproof client-check -- python3 examples/clients/harness.py

One key per refund, minted once before the first attempt and re-sent on every retry;
409 waits Retry-After; 422 and other 4xx are final; running out of attempts is "unknown".
"""
import json
import os
import time
import urllib.error
import urllib.request
import uuid

BASE = os.environ["IDEMPROOF_BASE_URL"]
OUTCOMES = os.environ.get("IDEMPROOF_OUTCOME_FILE", os.devnull)


def refund(order_id: str, key: str, attempts: int = 5) -> str:
    body = json.dumps({"order_id": order_id, "amount": 4900}).encode()
    for attempt in range(attempts):
        req = urllib.request.Request(
            f"{BASE}/v1/refunds", data=body, method="POST",
            headers={"Idempotency-Key": key, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=1):
                return "ok"
        except urllib.error.HTTPError as e:
            if e.code in (409, 429):
                time.sleep(int(e.headers.get("Retry-After") or 1))
                continue
            if e.code < 500:
                return "failed"        # 422 and friends: a bug to fix, not to retry
        except OSError:
            pass                       # reset, timeout: the refund may exist; retry, SAME key
        time.sleep(0.1 * 2 ** attempt)
    return "unknown"                   # never "failed": it may have committed


with open(OUTCOMES, "a") as out:
    for order_id in ["order-1", "order-2", "order-3"]:
        key = str(uuid.uuid4())        # minted once per operation, before the first attempt
        outcome = refund(order_id, key)
        out.write(json.dumps({"operation": order_id, "outcome": outcome, "key": key}) + "\n")
