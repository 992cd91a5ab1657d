#!/bin/sh
# Keeps its key after a 5xx but mints a new one after a reset, and only for order-2: a
# retry loop that is wrong only on the runs whose seed deals the reset to order-2.
set -u
base="${IDEMPROOF_BASE_URL:?}"
outcomes="${IDEMPROOF_OUTCOME_FILE:-/dev/null}"
for order in order-1 order-2 order-3; do
  key="op-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  outcome=unknown
  for attempt in 1 2 3 4 5; do
    status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST "$base/v1/refunds" \
      -H "Idempotency-Key: $key" -H 'Content-Type: application/json' -d "{\"order_id\":\"$order\",\"amount\":4900}")
    case "$status" in
      2??) outcome=ok; break ;;
      000) [ "$order" = order-2 ] && key="op-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"; sleep 0.1 ;;
      *) sleep 0.1 ;;
    esac
  done
  printf '{"operation":"%s","outcome":"%s","key":"%s"}\n' "$order" "$outcome" "$key" >> "$outcomes"
done
