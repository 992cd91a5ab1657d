#!/bin/sh
# A correct retry loop for POST /v1/refunds, in plain sh + curl:
#   - one key per refund, minted ONCE before the first attempt and re-sent on every retry;
#   - 5xx, resets and timeouts are retried (the refund may have committed: same key!);
#   - 409 is retried after its Retry-After; 422 and other 4xx are never retried;
#   - when the attempts run out the outcome is "unknown", never "failed".
# Run it under the harness:  idemproof client-check -- examples/clients/good.sh
set -u
base="${IDEMPROOF_BASE_URL:?run me under idemproof client-check}"
key_header="${IDEMPROOF_KEY_HEADER:-Idempotency-Key}"
outcomes="${IDEMPROOF_OUTCOME_FILE:-/dev/null}"
headers=$(mktemp) && trap 'rm -f "$headers"' EXIT

for order in order-1 order-2 order-3; do
  key="refund-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"   # minted once, here
  outcome=unknown
  for attempt in 1 2 3 4 5; do
    status=$(curl -s -o /dev/null -D "$headers" -w '%{http_code}' --max-time 1 \
      -X POST "$base/v1/refunds" -H "$key_header: $key" -H 'Content-Type: application/json' \
      -d "{\"order_id\":\"$order\",\"amount\":4900}")
    case "$status" in
      2??) outcome=ok; break ;;
      409|429) retry_after=$(grep -i '^retry-after:' "$headers" | tr -dc '0-9')
               sleep "${retry_after:-1}" ;;
      4??) outcome=failed; break ;;
      *)   sleep 0.2 ;;   # 5xx, reset (000) or timeout: unknown, retry with the SAME key
    esac
  done
  echo "$order: $outcome after $attempt attempt(s)" >&2
  printf '{"operation":"%s","outcome":"%s","key":"%s"}\n' "$order" "$outcome" "$key" >> "$outcomes"
done
