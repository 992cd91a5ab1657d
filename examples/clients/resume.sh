#!/bin/sh
# A correct retry loop that survives its own restarts (a crash, a deploy, a resumed
# agent session): good.sh plus a state folder. Before the first attempt of an operation
# its key is written to $IDEMPROOF_STATE_DIR/<operation>.key; a restarted run re-sends the
# pending operation under that key, and skips the operations marked done.
#   idemproof client-check --restart -- examples/clients/resume.sh             → no findings
# The same loop with the key derived from the process start time:
#   idemproof client-check --restart -- examples/clients/resume.sh --start-time-key   → client/key-survives-restart
set -u
base="${IDEMPROOF_BASE_URL:?run me under idemproof client-check}"
state="${IDEMPROOF_STATE_DIR:?run me under idemproof client-check (it gives the state folder)}"
method="${IDEMPROOF_OPERATION_METHOD:-POST}"
url="${IDEMPROOF_OPERATION_URL:-$base/v1/refunds}"
reference_body='{"order_id": "{{.Entity}}", "amount": 4900}'
body_template="${IDEMPROOF_OPERATION_BODY:-$reference_body}"
key_field="${IDEMPROOF_KEY_FIELD:-}"
key_header="${IDEMPROOF_KEY_HEADER:-Idempotency-Key}"
outcomes="${IDEMPROOF_OUTCOME_FILE:-/dev/null}"
started=$(date +%s%N)   # the process start time: what --start-time-key (BUG) builds keys from
headers=$(mktemp) && trap 'rm -f "$headers"' EXIT

for order in order-1 order-2 order-3; do
  [ -e "$state/$order.done" ] && continue          # finished before a restart
  if [ "${1:-}" = --start-time-key ]; then
    key="op-$order-$started"                         # BUG: a restart is a new process, so a new key
  elif [ -s "$state/$order.key" ]; then
    key=$(cat "$state/$order.key")                   # pending before a restart: the same key
  else
    key="op-$order-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    printf '%s' "$key" > "$state/$order.key.tmp" && mv "$state/$order.key.tmp" "$state/$order.key"   # kept BEFORE the first attempt
  fi
  body=$(printf '%s' "$body_template" | sed "s/{{\.Entity}}/$order/g")
  if [ -n "$key_field" ]; then
    body=$(printf '%s' "$body" | jq -c --arg k "$key" --arg p "$key_field" 'setpath($p | split("."); $k)')
    keyargs=""
  else
    keyargs="$key_header: $key"
  fi
  outcome=unknown
  for attempt in 1 2 3 4 5; do
    if [ -n "$keyargs" ]; then
      status=$(curl -s -o /dev/null -D "$headers" -w '%{http_code}' --max-time 1 \
        -X "$method" "$(printf '%s' "$url" | sed "s/{{\.Entity}}/$order/g")" -H "$keyargs" \
        -H 'Content-Type: application/json' -d "$body")
    else
      status=$(curl -s -o /dev/null -D "$headers" -w '%{http_code}' --max-time 1 \
        -X "$method" "$(printf '%s' "$url" | sed "s/{{\.Entity}}/$order/g")" \
        -H 'Content-Type: application/json' -d "$body")
    fi
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
  : > "$state/$order.done"
done
