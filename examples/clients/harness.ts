// A TypeScript harness's retry loop under idemproof client-check (Node 18+, fetch built in;
// an ES module: top-level await).
//
//   idemproof client-check -- npx tsx examples/clients/harness.ts
//   idemproof client-check -- node --experimental-strip-types examples/clients/harness.ts   (Node 22.6+)
//
// One key per refund, minted once before the first attempt and re-sent on every retry;
// 409 waits Retry-After; 422 and other 4xx are final; running out of attempts is "unknown".
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";

const base = process.env.IDEMPROOF_BASE_URL!;
const outcomes = process.env.IDEMPROOF_OUTCOME_FILE ?? "/dev/null";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function refund(orderId: string, key: string, attempts = 5): Promise<string> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      const res = await fetch(`${base}/v1/refunds`, {
        method: "POST",
        headers: { "Idempotency-Key": key, "Content-Type": "application/json" },
        body: JSON.stringify({ order_id: orderId, amount: 4900 }),
        signal: AbortSignal.timeout(1000),
      });
      await res.arrayBuffer();
      if (res.ok) return "ok";
      if (res.status === 409 || res.status === 429) {
        await sleep(1000 * Number(res.headers.get("Retry-After") ?? 1));
        continue;
      }
      if (res.status < 500) return "failed"; // 422 and friends: a bug to fix, not to retry
    } catch {
      // reset, timeout: the refund may exist; retry with the SAME key
    }
    await sleep(100 * 2 ** attempt);
  }
  return "unknown"; // never "failed": it may have committed
}

for (const orderId of ["order-1", "order-2", "order-3"]) {
  const key = randomUUID(); // minted once per operation, before the first attempt
  const outcome = await refund(orderId, key);
  appendFileSync(outcomes, JSON.stringify({ operation: orderId, outcome, key }) + "\n");
}
