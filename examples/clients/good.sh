#!/bin/sh
# A correct retry loop in plain sh + curl, for the operation client-check names:
#   - one key per operation, minted ONCE before the first attempt and re-sent on every retry;
#   - 5xx, resets and timeouts are retried (the operation may have committed: same key!);
#   - 409 is retried after its Retry-After; 422 and other 4xx are never retried;
#   - when the attempts run out the outcome is "unknown", never "failed".
# Run it under the harness:
#   idemproof client-check -- examples/clients/good.sh                          # the reference refund server
#   idemproof client-check --profile my-api.yaml -- examples/clients/good.sh    # your API
# It sends the profile's operation ($IDEMPROOF_OPERATION_METHOD $IDEMPROOF_OPERATION_URL with
# $IDEMPROOF_OPERATION_BODY, {{.Entity}} filled in), the key in $IDEMPROOF_KEY_HEADER, or at
# $IDEMPROOF_KEY_FIELD in the body (that needs jq). A real client knows its own API; this one
# reads it from the environment so it runs against any profile.
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
  key="op-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"   # minted once, here
  body=$(printf '%s' "$body_template" | sed "s/{{\.Entity}}/$order/g")
  if [ -n "$key_field" ]; then
    body=$(printf '%s' "$body" | jq -c --arg k "$key" --arg p "$key_field" 'setpath($p | split("."); $k)')
    set --
  else
    set -- -H "$key_header: $key"
  fi
  outcome=unknown
  for attempt in 1 2 3 4 5; do
    status=$(curl -s -o /dev/null -D "$headers" -w '%{http_code}' --max-time 1 \
      -X "$method" "$(printf '%s' "$url" | sed "s/{{\.Entity}}/$order/g")" "$@" \
      -H 'Content-Type: application/json' -d "$body")
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
