#!/bin/sh
# A BROKEN retry loop: identical to good.sh except that the key is minted inside the
# retry loop, so every retry is a new operation for the server. Under faults that lose
# the response after the operation committed, each retry does it again.
#   idemproof client-check -- examples/clients/key-per-attempt.sh   → client/key-per-attempt
set -u
base="${IDEMPROOF_BASE_URL:?run me under idemproof client-check}"
method="${IDEMPROOF_OPERATION_METHOD:-POST}"
url="${IDEMPROOF_OPERATION_URL:-$base/v1/refunds}"
reference_body='{"order_id": "{{.Entity}}", "amount": 4900}'
body_template="${IDEMPROOF_OPERATION_BODY:-$reference_body}"
key_field="${IDEMPROOF_KEY_FIELD:-}"
key_header="${IDEMPROOF_KEY_HEADER:-Idempotency-Key}"
outcomes="${IDEMPROOF_OUTCOME_FILE:-/dev/null}"
headers=$(mktemp) && trap 'rm -f "$headers"' EXIT

for order in order-1 order-2 order-3; do
  outcome=unknown
  for attempt in 1 2 3 4 5; do
    key="op-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"   # BUG: a fresh key per attempt
    body=$(printf '%s' "$body_template" | sed "s/{{\.Entity}}/$order/g")
    if [ -n "$key_field" ]; then
      body=$(printf '%s' "$body" | jq -c --arg k "$key" --arg p "$key_field" 'setpath($p | split("."); $k)')
      set --
    else
      set -- -H "$key_header: $key"
    fi
    status=$(curl -s -o /dev/null -D "$headers" -w '%{http_code}' --max-time 1 \
      -X "$method" "$(printf '%s' "$url" | sed "s/{{\.Entity}}/$order/g")" "$@" \
      -H 'Content-Type: application/json' -d "$body")
    case "$status" in
      2??) outcome=ok; break ;;
      409|429) retry_after=$(grep -i '^retry-after:' "$headers" | tr -dc '0-9')
               sleep "${retry_after:-1}" ;;
      4??) outcome=failed; break ;;
      *)   sleep 0.2 ;;
    esac
  done
  echo "$order: $outcome after $attempt attempt(s)" >&2
  printf '{"operation":"%s","outcome":"%s","key":"%s"}\n' "$order" "$outcome" "$key" >> "$outcomes"
done
