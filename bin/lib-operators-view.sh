# shellcheck shell=bash
# Shared functions of bin/check-temporal-cli and bin/screenshot-web-ui (the "operators' view"
# checks). Source it after lib.sh; do not run it.
#
# They use the local stack of bin/dripline-up: if it is not healthy on 127.0.0.1:8080 they start
# it and stop again, at the end, whatever they started (the stack is left as it was found).

OV_HTTP_PORT="${DRIPLINE_HTTP_PORT:-8080}"
OV_BASE_URL="http://127.0.0.1:$OV_HTTP_PORT"
OV_TEMPORAL_ADDRESS="127.0.0.1:7233"
OV_UI_URL="http://127.0.0.1:8233"
OV_NAMESPACE="default"

OV_STARTED_APP=0      # 1 when this script started the standalone JVM
OV_STARTED_TEMPORAL=0 # 1 when this script started the Temporal dev server

# ---------------------------------------------------------------------------------------------
# JSON (python3)

# jget JSON EXPR: prints the Python expression EXPR evaluated with d = the parsed JSON; None
# prints as null, booleans as true/false, dicts and lists as JSON. An unparsable JSON or a failed
# lookup prints nothing and fails.
jget() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.loads(sys.argv[1])
    v = eval(sys.argv[2], {"json": json}, {"d": d})
except Exception:
    sys.exit(1)
if v is None:
    print("null")
elif isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, (dict, list)):
    print(json.dumps(v, ensure_ascii=False, sort_keys=True))
else:
    print(v)
PY
}

# ---------------------------------------------------------------------------------------------
# HTTP API

# api METHOD PATH [BODY]: calls Dripline's API with the operator token (api_curl in lib.sh); sets
# API_STATUS (000 when nothing answered) and API_BODY. Never fails.
api() {
  local method="$1" path="$2" body="${3:-}" out
  local args=(-s -X "$method" --max-time 15 -w '\n%{http_code}')
  if [[ -n "$body" ]]; then
    args+=(-H 'Content-Type: application/json' --data "$body")
  fi
  out="$(api_curl "${args[@]}" "$OV_BASE_URL$path" 2>/dev/null || true)"
  API_STATUS="${out##*$'\n'}"
  API_BODY="${out%$'\n'*}"
  [[ "$API_STATUS" =~ ^[0-9]{3}$ ]] || { API_STATUS=000; API_BODY=""; }
  [[ "$out" == *$'\n'* ]] || API_BODY=""
}

# ---------------------------------------------------------------------------------------------
# Temporal CLI

# tctl_ SUBCOMMAND...: the real `temporal` CLI against the local dev server, bounded in time.
tctl_() {
  timeout "${OV_CLI_TIMEOUT:-30}" "$TEMPORAL_BIN" "$@" --address "$OV_TEMPORAL_ADDRESS" \
    --namespace "$OV_NAMESPACE"
}

# ---------------------------------------------------------------------------------------------
# The stack

# ov_ensure_stack: uses the running stack when /health answers 200; otherwise runs
# bin/dripline-up (bounded by DRIPLINE_UP_TIMEOUT, default 900 s) and remembers what it started.
ov_ensure_stack() {
  ensure_temporal_cli
  if [[ "$(http_status "$OV_BASE_URL/health")" == 200 ]]; then
    log "using the running Dripline stack at $OV_BASE_URL"
    return 0
  fi
  local temporal_was_up=0 app_was_up=0
  temporal_healthy "$OV_TEMPORAL_ADDRESS" && temporal_was_up=1
  pid_alive "$DRIPLINE_STATE/standalone.pid" && app_was_up=1
  log "Dripline is not healthy at $OV_BASE_URL: starting the stack with bin/dripline-up (log .dripline/logs/check-dripline-up.log)"
  ((temporal_was_up)) || OV_STARTED_TEMPORAL=1
  ((app_was_up)) || OV_STARTED_APP=1
  if ! timeout "${DRIPLINE_UP_TIMEOUT:-900}" "$DRIPLINE_ROOT/bin/dripline-up" \
    >"$DRIPLINE_LOGS/check-dripline-up.log" 2>&1; then
    tail_log "$DRIPLINE_LOGS/check-dripline-up.log" 40
    return 1
  fi
  log "stack started (it will be stopped again at the end)"
}

# ov_restore_stack: stops what ov_ensure_stack started: all of it with bin/dripline-down, or only
# the standalone JVM when the Temporal dev server was already running before.
ov_restore_stack() {
  if ((OV_STARTED_APP && OV_STARTED_TEMPORAL)); then
    log "stopping the stack this script started (bin/dripline-down)"
    "$DRIPLINE_ROOT/bin/dripline-down" >>"$DRIPLINE_LOGS/check-dripline-up.log" 2>&1 ||
      warn "bin/dripline-down failed; see .dripline/logs/check-dripline-up.log"
  elif ((OV_STARTED_APP)); then
    stop_pidfile "Dripline standalone JVM" "$DRIPLINE_STATE/standalone.pid" 60
  elif ((OV_STARTED_TEMPORAL)); then
    stop_temporal dev
  fi
  OV_STARTED_APP=0
  OV_STARTED_TEMPORAL=0
}

# ---------------------------------------------------------------------------------------------
# Runs

# ov_create_sleep_run ITEMS SLEEP_MS BATCH_SIZE CAP FAULT_TAG: POST /api/runs of example.sleep;
# sets OV_RUN_ID and OV_WORKFLOW_ID, or fails with the API's answer.
ov_create_sleep_run() {
  local body
  body="$(printf '{"backfill":"example.sleep","options":{"items":%s,"sleepMs":%s,"faultTag":"%s"},"batchSize":%s,"maxParallelBatches":%s}' \
    "$1" "$2" "$5" "$3" "$4")"
  api POST /api/runs "$body"
  if [[ "$API_STATUS" != 201 ]]; then
    warn "POST /api/runs answered $API_STATUS: $API_BODY"
    return 1
  fi
  OV_RUN_ID="$(jget "$API_BODY" 'd["id"]')"
  OV_WORKFLOW_ID="$(jget "$API_BODY" 'd["workflowId"]')"
}

# ov_run_status ID: prints the run's status from the API (nothing when it cannot be read).
ov_run_status() {
  api GET "/api/runs/$1"
  [[ "$API_STATUS" == 200 ]] && jget "$API_BODY" 'd["status"]'
}

# ov_wait_run_status ID TIMEOUT STATUS...: waits until the API shows one of STATUS.
ov_wait_run_status() {
  local id="$1" timeout="$2" status deadline
  shift 2
  deadline=$((SECONDS + timeout))
  while :; do
    status="$(ov_run_status "$id" || true)"
    local wanted
    for wanted in "$@"; do
      [[ "$status" == "$wanted" ]] && return 0
    done
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# ov_discard_run ID: stops the run if it is still active, waits until it ended, deletes it.
ov_discard_run() {
  local id="$1" status
  status="$(ov_run_status "$id" || true)"
  [[ -z "$status" ]] && return 0 # already gone
  case "$status" in
    completed | failed | stopped) ;;
    *)
      api POST "/api/runs/$id/stop"
      ov_wait_run_status "$id" 60 completed failed stopped ||
        warn "run $id did not end within 60s after stop (status $(ov_run_status "$id" || true))"
      ;;
  esac
  api DELETE "/api/runs/$id"
  if [[ "$API_STATUS" == 204 || "$API_STATUS" == 404 ]]; then
    log "deleted run $id"
  else
    warn "DELETE /api/runs/$id answered $API_STATUS: $API_BODY"
    return 1
  fi
}
