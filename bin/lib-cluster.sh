# shellcheck shell=bash
# A multi-service Temporal cluster on the local PostgreSQL (spec §12 D1): the Temporal server built
# from source with `go install` (once per version, into .dripline/cluster/<version>/), a persistence
# and a visibility database, and frontend, history, matching and worker as four separate processes
# on 127.0.0.1. Sourced by lib.sh; used by bin/dripline-cluster, bin/dripline-up --cluster and
# bin/dripline-test.
#
# An instance is named (NAME): its configuration, pid files and settings live in
# .dripline/cluster-NAME/, each service's log in .dripline/logs/cluster-NAME-SERVICE.log. It
# keeps the settings it was configured with (cluster.env there); a variable given to
# cluster_configure NAME changes one:
#   DRIPLINE_CLUSTER_FRONTEND_PORT  the frontend's gRPC port, what clients dial (default 18233)
#   DRIPLINE_CLUSTER_PORT_BASE      first of 7 consecutive ports for the services' other
#                                   listeners: membership and internal gRPC (default 18234)
#   DRIPLINE_CLUSTER_METRICS_PORT   first of 4 consecutive ports for the services' Prometheus
#                                   endpoints, /metrics (default none: no metrics)
#   DRIPLINE_CLUSTER_DB             persistence database (default temporal_NAME); visibility is
#                                   DRIPLINE_CLUSTER_DB_visibility
#   DRIPLINE_CLUSTER_SHARDS         history shards (default 4; fixed when the database is created)
#   DRIPLINE_CLUSTER_LOG_LEVEL      the services' log level (default warn)
#   DRIPLINE_CLUSTER_TLS_DIR        a directory: the frontend serves TLS and requires a client
#                                   certificate signed by its CA (mTLS); certificates missing there
#                                   are made (cluster_tls_certificates). Empty: plain (default)

DRIPLINE_CLUSTER_VERSION="${DRIPLINE_CLUSTER_VERSION:-v1.32.1}"
# The Go its go.mod requires (v1.32.2, v1.31.5 and v1.30.9 need 1.26.10).
DRIPLINE_CLUSTER_GO_MIN="${DRIPLINE_CLUSTER_GO_MIN:-1.26.8}"
DRIPLINE_CLUSTER_HOME="${DRIPLINE_CLUSTER_HOME:-$DRIPLINE_STATE/cluster/$DRIPLINE_CLUSTER_VERSION}"
DRIPLINE_CLUSTER_SERVER="$DRIPLINE_CLUSTER_HOME/bin/temporal-server"
DRIPLINE_CLUSTER_SQL_TOOL="$DRIPLINE_CLUSTER_HOME/bin/temporal-sql-tool"
# Start order; stopped in reverse. Each is its own process.
DRIPLINE_CLUSTER_SERVICES=(history matching frontend worker)
# The name in the frontend's certificate of a TLS instance (no IP address: a client dialing
# 127.0.0.1 names it, TEMPORAL_TLS_SERVER_NAME).
DRIPLINE_CLUSTER_TLS_SERVER_NAME=localhost

# ---------------------------------------------------------------------------------------------
# The binaries

# cluster_binaries_present: true when the server and the SQL tool of DRIPLINE_CLUSTER_VERSION are
# built.
cluster_binaries_present() {
  [[ -f "$DRIPLINE_CLUSTER_HOME/built" && -x "$DRIPLINE_CLUSTER_SERVER" && -x "$DRIPLINE_CLUSTER_SQL_TOOL" ]]
}

# cluster_go_usable: true when the binaries are built, or a Go toolchain at least
# DRIPLINE_CLUSTER_GO_MIN (what DRIPLINE_CLUSTER_VERSION's go.mod requires) can build them;
# otherwise false with the reason in CLUSTER_GO_PROBLEM.
cluster_go_usable() {
  CLUSTER_GO_PROBLEM=""
  cluster_binaries_present && return 0
  if ! command -v go >/dev/null 2>&1; then
    CLUSTER_GO_PROBLEM="go is not installed (the Temporal server $DRIPLINE_CLUSTER_VERSION is built from source; it needs Go >= $DRIPLINE_CLUSTER_GO_MIN)"
    return 1
  fi
  local have
  have="$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null)"
  have="${have#go}"
  if [[ "$(printf '%s\n%s\n' "$DRIPLINE_CLUSTER_GO_MIN" "$have" | sort -V | head -n 1)" != "$DRIPLINE_CLUSTER_GO_MIN" ]]; then
    CLUSTER_GO_PROBLEM="go $have is too old to build the Temporal server $DRIPLINE_CLUSTER_VERSION (needs >= $DRIPLINE_CLUSTER_GO_MIN)"
    return 1
  fi
}

_build_cluster_binaries() {
  # Re-check under the lock: another script may have just built them.
  cluster_binaries_present && return 0
  cluster_go_usable || die "cannot build the Temporal server: $CLUSTER_GO_PROBLEM"
  local build_log="$DRIPLINE_LOGS/cluster-build-$DRIPLINE_CLUSTER_VERSION.log" start=$SECONDS
  rm -rf "$DRIPLINE_CLUSTER_HOME"
  mkdir -p "$DRIPLINE_CLUSTER_HOME/gobin"
  log "building the Temporal server $DRIPLINE_CLUSTER_VERSION (go install, $(go version | awk '{print $3}'); minutes from a cold Go module cache); log ${build_log#"$DRIPLINE_ROOT"/}"
  # GOTOOLCHAIN=local: never download another Go; a too old one fails here with a clear message.
  if ! GOBIN="$DRIPLINE_CLUSTER_HOME/gobin" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go install \
    "go.temporal.io/server/cmd/server@$DRIPLINE_CLUSTER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@$DRIPLINE_CLUSTER_VERSION" >"$build_log" 2>&1 </dev/null; then
    tail_log "$build_log" 30
    die "go install of the Temporal server $DRIPLINE_CLUSTER_VERSION failed; see ${build_log#"$DRIPLINE_ROOT"/}"
  fi
  mkdir -p "$DRIPLINE_CLUSTER_HOME/bin"
  mv "$DRIPLINE_CLUSTER_HOME/gobin/server" "$DRIPLINE_CLUSTER_SERVER"
  mv "$DRIPLINE_CLUSTER_HOME/gobin/sql" "$DRIPLINE_CLUSTER_SQL_TOOL"
  rmdir "$DRIPLINE_CLUSTER_HOME/gobin"
  touch "$DRIPLINE_CLUSTER_HOME/built"
  log "built the Temporal server $DRIPLINE_CLUSTER_VERSION in $((SECONDS - start))s"
}

# ensure_cluster_binaries: builds the Temporal server and temporal-sql-tool of
# DRIPLINE_CLUSTER_VERSION into .dripline/cluster/<version>/bin once; a later call returns at once.
# Exports DRIPLINE_CLUSTER_SERVER and DRIPLINE_CLUSTER_SQL_TOOL.
ensure_cluster_binaries() {
  cluster_binaries_present || with_lock cluster-build _build_cluster_binaries
  export DRIPLINE_CLUSTER_SERVER DRIPLINE_CLUSTER_SQL_TOOL
  log "Temporal server $DRIPLINE_CLUSTER_VERSION: ${DRIPLINE_CLUSTER_SERVER#"$DRIPLINE_ROOT"/}"
}

# ---------------------------------------------------------------------------------------------
# TLS

# cluster_tls_certificates DIR: makes, with openssl, what a TLS instance needs in DIR unless it is
# there: a CA (ca.pem, ca.key), the frontend's certificate for DNS name
# DRIPLINE_CLUSTER_TLS_SERVER_NAME only (frontend.pem, frontend.key) and a client certificate
# (client.pem, client.key) for the services' own calls, the temporal CLI and Dripline. Keys are
# PEM PKCS#8 (what Dripline reads), P-256; certificates last 30 days.
cluster_tls_certificates() {
  local dir="$1"
  [[ -f "$dir/ca.pem" && -f "$dir/frontend.pem" && -f "$dir/frontend.key" && -f "$dir/client.pem" && -f "$dir/client.key" ]] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl is needed to make the cluster's TLS certificates"
  mkdir -p "$dir"
  local out="$dir/openssl.log"
  (
    set -e
    cd "$dir"
    umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
      -keyout ca.key -out ca.pem -subj "/CN=Dripline cluster test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    _cluster_tls_leaf frontend "$DRIPLINE_CLUSTER_TLS_SERVER_NAME" \
      "subjectAltName=DNS:$DRIPLINE_CLUSTER_TLS_SERVER_NAME
extendedKeyUsage=serverAuth"
    _cluster_tls_leaf client "dripline-client" "extendedKeyUsage=clientAuth"
    rm -f ./*.csr ca.srl
    chmod 644 ./*.pem
  ) >"$out" 2>&1 || {
    tail_log "$out" 20
    die "could not make TLS certificates in $dir"
  }
  log "TLS certificates made in $dir (CA, frontend $DRIPLINE_CLUSTER_TLS_SERVER_NAME, client)"
}

# _cluster_tls_leaf NAME CN EXTENSIONS: NAME.key and NAME.pem signed by ca.pem (in the current
# directory).
_cluster_tls_leaf() {
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" \
    -out "$1.csr" -subj "/CN=$2"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -sha256 \
    -out "$1.pem" -extfile <(printf '%s\nkeyUsage=critical,digitalSignature\n' "$3")
}

# cluster_client_env NAME: prints the environment (KEY=VALUE lines) a client of instance NAME
# needs: TEMPORAL_ADDRESS and, for a TLS instance, the Temporal CLI's and Dripline's TLS
# variables with the client certificate.
cluster_client_env() {
  _cluster_load "$1"
  printf 'TEMPORAL_ADDRESS=127.0.0.1:%s\n' "$CLUSTER_FRONTEND_PORT"
  [[ -n "${CLUSTER_TLS_DIR:-}" ]] || return 0
  printf 'TEMPORAL_TLS_CLIENT_CERT_PATH=%s\n' "$CLUSTER_TLS_DIR/client.pem"
  printf 'TEMPORAL_TLS_CLIENT_KEY_PATH=%s\n' "$CLUSTER_TLS_DIR/client.key"
  printf 'TEMPORAL_TLS_SERVER_CA_CERT_PATH=%s\n' "$CLUSTER_TLS_DIR/ca.pem"
  printf 'TEMPORAL_TLS_SERVER_NAME=%s\n' "$DRIPLINE_CLUSTER_TLS_SERVER_NAME"
}

# _cluster_cli_env: (after _cluster_load; call in a subshell) exports the temporal CLI's TLS
# variables for a TLS instance, so the CLI calls below reach its frontend.
_cluster_cli_env() {
  [[ -n "${CLUSTER_TLS_DIR:-}" ]] || return 0
  export TEMPORAL_TLS_CLIENT_CERT_PATH="$CLUSTER_TLS_DIR/client.pem"
  export TEMPORAL_TLS_CLIENT_KEY_PATH="$CLUSTER_TLS_DIR/client.key"
  export TEMPORAL_TLS_SERVER_CA_CERT_PATH="$CLUSTER_TLS_DIR/ca.pem"
  export TEMPORAL_TLS_SERVER_NAME="$DRIPLINE_CLUSTER_TLS_SERVER_NAME"
}

# _cluster_healthy_frontend: (after _cluster_load) true when the instance's frontend reports
# SERVING.
_cluster_healthy_frontend() {
  (
    _cluster_cli_env
    temporal_healthy "127.0.0.1:$CLUSTER_FRONTEND_PORT"
  )
}

# ---------------------------------------------------------------------------------------------
# An instance: databases, configuration

_cluster_dir() { printf '%s/cluster-%s\n' "$DRIPLINE_STATE" "$1"; }

_cluster_check_name() {
  [[ "$1" =~ ^[a-z0-9][a-z0-9_-]*$ ]] || die "not a plain cluster name: $1"
}

# _cluster_load NAME: reads the instance's settings (written by cluster_configure) into CLUSTER_*.
_cluster_load() {
  _cluster_check_name "$1"
  local env_file
  env_file="$(_cluster_dir "$1")/cluster.env"
  [[ -f "$env_file" ]] || die "cluster '$1' is not configured (no ${env_file#"$DRIPLINE_ROOT"/}); run cluster_configure $1 (bin/dripline-cluster prepare)"
  # shellcheck disable=SC1090
  . "$env_file"
}

# _cluster_sql_tool DB ARGS...: temporal-sql-tool against database DB as role dripline.
_cluster_sql_tool() {
  local db="$1"
  shift
  SQL_PASSWORD=dripline "$DRIPLINE_CLUSTER_SQL_TOOL" --plugin postgres12 --endpoint 127.0.0.1 \
    --port "$DRIPLINE_PG_PORT" --user dripline --database "$db" "$@"
}

# _cluster_schema DB SCHEMA: creates the schema-version tables when missing, then brings DB to the
# newest version of the embedded schema SCHEMA (postgresql/v12/temporal or .../visibility).
_cluster_schema() {
  local db="$1" schema="$2" schema_log="$DRIPLINE_LOGS/cluster-schema-$1.log"
  if [[ "$(_psql_admin -d "$db" -c "SELECT to_regclass('public.schema_version') IS NOT NULL")" != t ]]; then
    _cluster_sql_tool "$db" setup-schema -v 0.0 >"$schema_log" 2>&1 || {
      tail_log "$schema_log" 30
      die "temporal-sql-tool setup-schema on $db failed"
    }
  fi
  _cluster_sql_tool "$db" update-schema --schema-name "$schema" >>"$schema_log" 2>&1 || {
    tail_log "$schema_log" 30
    die "temporal-sql-tool update-schema --schema-name $schema on $db failed"
  }
}

# cluster_configure NAME [--fresh]: (after ensure_postgres and ensure_cluster_binaries) creates the
# instance's persistence and visibility databases (owned by dripline) when missing, applies the
# server's PostgreSQL schemas with temporal-sql-tool, and writes its settings and one configuration
# file per service into .dripline/cluster-NAME/. --fresh drops both databases first (the instance
# must be stopped): a cluster with no workflows. Idempotent otherwise.
cluster_configure() {
  local name="$1" fresh="${2:-}"
  _cluster_check_name "$name"
  cluster_binaries_present || die "the Temporal server $DRIPLINE_CLUSTER_VERSION is not built (ensure_cluster_binaries)"
  local dir frontend base metrics_base db shards level
  dir="$(_cluster_dir "$name")"
  # An instance keeps its settings; a variable given changes one.
  local CLUSTER_FRONTEND_PORT="" CLUSTER_PORT_BASE="" CLUSTER_METRICS_PORT="" CLUSTER_DB=""
  local CLUSTER_SHARDS="" CLUSTER_LOG_LEVEL="" CLUSTER_NAME="" CLUSTER_TLS_DIR=""
  if [[ -f "$dir/cluster.env" ]]; then
    # shellcheck disable=SC1091
    . "$dir/cluster.env"
  fi
  frontend="${DRIPLINE_CLUSTER_FRONTEND_PORT:-${CLUSTER_FRONTEND_PORT:-18233}}"
  base="${DRIPLINE_CLUSTER_PORT_BASE:-${CLUSTER_PORT_BASE:-18234}}"
  metrics_base="${DRIPLINE_CLUSTER_METRICS_PORT-${CLUSTER_METRICS_PORT:-}}"
  db="${DRIPLINE_CLUSTER_DB:-${CLUSTER_DB:-temporal_${name//-/_}}}"
  shards="${DRIPLINE_CLUSTER_SHARDS:-${CLUSTER_SHARDS:-4}}"
  level="${DRIPLINE_CLUSTER_LOG_LEVEL:-${CLUSTER_LOG_LEVEL:-warn}}"
  local tls_dir="${DRIPLINE_CLUSTER_TLS_DIR-${CLUSTER_TLS_DIR:-}}"
  [[ "$frontend" =~ ^[0-9]+$ && "$base" =~ ^[0-9]+$ && "$shards" =~ ^[0-9]+$ && "$metrics_base" =~ ^[0-9]*$ ]] ||
    die "DRIPLINE_CLUSTER_FRONTEND_PORT, _PORT_BASE, _METRICS_PORT and _SHARDS must be numbers"
  ((frontend < base || frontend > base + 6)) ||
    die "the frontend port $frontend lies inside the 7 ports from DRIPLINE_CLUSTER_PORT_BASE=$base"
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "DRIPLINE_CLUSTER_DB must be a plain lower-case name: $db"
  mkdir -p "$dir"

  if [[ "$fresh" == --fresh ]]; then
    ! cluster_running "$name" || die "cluster '$name' is running; stop it before --fresh"
    local drop
    for drop in "$db" "${db}_visibility"; do
      if [[ "$(_psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$drop'")" == 1 ]]; then
        log "dropping database $drop (fresh cluster '$name')"
        _psql_admin -c "DROP DATABASE $drop WITH (FORCE)"
      fi
    done
  fi
  if [[ -n "$tls_dir" ]]; then
    mkdir -p "$tls_dir"
    tls_dir="$(cd "$tls_dir" && pwd)"
    ! cluster_running "$name" || [[ "$tls_dir" == "$CLUSTER_TLS_DIR" ]] ||
      die "cluster '$name' is running; stop it before changing DRIPLINE_CLUSTER_TLS_DIR"
    cluster_tls_certificates "$tls_dir"
  elif [[ -n "$CLUSTER_TLS_DIR" ]]; then
    ! cluster_running "$name" || die "cluster '$name' is running; stop it before turning TLS off"
  fi
  ensure_database "$db"
  ensure_database "${db}_visibility"
  _cluster_schema "$db" postgresql/v12/temporal
  _cluster_schema "${db}_visibility" postgresql/v12/visibility

  cat >"$dir/cluster.env" <<EOF
CLUSTER_NAME=$name
CLUSTER_FRONTEND_PORT=$frontend
CLUSTER_PORT_BASE=$base
CLUSTER_METRICS_PORT=$metrics_base
CLUSTER_DB=$db
CLUSTER_SHARDS=$shards
CLUSTER_LOG_LEVEL=$level
CLUSTER_TLS_DIR=$tls_dir
EOF
  # Dynamic configuration: the server's defaults. Kept when it exists; the server rereads it.
  [[ -f "$dir/dynamicconfig.yaml" ]] ||
    printf '# Dynamic configuration of cluster %s (key: [{value: ...}]); reread every 10s.\n' \
      "$name" >"$dir/dynamicconfig.yaml"
  # A configuration file per service: they differ only in the metrics port.
  local i=0 service metrics=""
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    [[ -n "$metrics_base" ]] && metrics=$((metrics_base + i))
    i=$((i + 1))
    _cluster_config_yaml "$dir" "$frontend" "$base" "$db" "$shards" "$level" "$metrics" "$tls_dir" \
      >"$dir/config-$service.yaml"
  done
  log "cluster '$name' configured: frontend 127.0.0.1:$frontend${tls_dir:+ (mTLS, certificates in $tls_dir)}, ports $base-$((base + 6))${metrics_base:+, metrics $metrics_base-$((metrics_base + 3))}, databases $db and ${db}_visibility, $shards history shards"
}

# _cluster_config_yaml DIR FRONTEND BASE DB SHARDS LEVEL [METRICS_PORT] [TLS_DIR]: the server
# configuration (Temporal v1.32 format; the server's config/development-postgres12.yaml is the
# model). Ports: frontend gRPC FRONTEND; membership of frontend BASE, gRPC and membership of
# history BASE+1, +2, of matching BASE+3, +4, of worker BASE+5, +6; Prometheus on METRICS_PORT
# when given. With TLS_DIR, the frontend serves mTLS (cluster_tls_certificates) and the services'
# own calls to it (system workers) present the client certificate; internode traffic stays plain.
_cluster_config_yaml() {
  local dir="$1" frontend="$2" base="$3" db="$4" shards="$5" level="$6" metrics="${7:-}"
  local tls="${8:-}"
  local metrics_yaml="" tls_yaml=""
  if [[ -n "$metrics" ]]; then
    metrics_yaml="$(printf '  metrics:\n    prometheus:\n      framework: tally\n      timerType: histogram\n      listenAddress: 127.0.0.1:%s' "$metrics")"
  fi
  if [[ -n "$tls" ]]; then
    tls_yaml="$(
      cat <<TLS
  tls:
    frontend:
      server:
        certFile: $tls/frontend.pem
        keyFile: $tls/frontend.key
        requireClientAuth: true
        clientCaFiles: [$tls/ca.pem]
    systemWorker:
      certFile: $tls/client.pem
      keyFile: $tls/client.key
      client:
        serverName: $DRIPLINE_CLUSTER_TLS_SERVER_NAME
        rootCaFiles: [$tls/ca.pem]
TLS
    )"
  fi
  cat <<EOF
# Written by bin/lib-cluster.sh; rewritten by every cluster_configure.
log:
  stdout: true
  level: $level

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: $shards
  datastores:
    postgres-default:
      sql:
        pluginName: postgres12
        databaseName: $db
        connectAddr: 127.0.0.1:$DRIPLINE_PG_PORT
        connectProtocol: tcp
        user: dripline
        password: dripline
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: postgres12
        databaseName: ${db}_visibility
        connectAddr: 127.0.0.1:$DRIPLINE_PG_PORT
        connectProtocol: tcp
        user: dripline
        password: dripline
        maxConns: 2
        maxIdleConns: 2
        maxConnLifetime: 1h

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  pprof:
    port: 0
$metrics_yaml
$tls_yaml

services:
  frontend:
    rpc:
      grpcPort: $frontend
      membershipPort: $base
      bindOnIP: 127.0.0.1
  history:
    rpc:
      grpcPort: $((base + 1))
      membershipPort: $((base + 2))
      bindOnIP: 127.0.0.1
  matching:
    rpc:
      grpcPort: $((base + 3))
      membershipPort: $((base + 4))
      bindOnIP: 127.0.0.1
  worker:
    rpc:
      grpcPort: $((base + 5))
      membershipPort: $((base + 6))
      bindOnIP: 127.0.0.1

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$frontend

dcRedirectionPolicy:
  policy: noop

dynamicConfigClient:
  filepath: $dir/dynamicconfig.yaml
  pollInterval: 10s
EOF
}

# ---------------------------------------------------------------------------------------------
# Processes

_cluster_check_service() {
  local service
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    [[ "$1" == "$service" ]] && return 0
  done
  die "not a cluster service: $1 (one of ${DRIPLINE_CLUSTER_SERVICES[*]})"
}

# _cluster_grpc_port SERVICE: the service's gRPC port (after _cluster_load).
_cluster_grpc_port() {
  case "$1" in
    frontend) echo "$CLUSTER_FRONTEND_PORT" ;;
    history) echo $((CLUSTER_PORT_BASE + 1)) ;;
    matching) echo $((CLUSTER_PORT_BASE + 3)) ;;
    worker) echo $((CLUSTER_PORT_BASE + 5)) ;;
  esac
}

# _cluster_await_listening NAME SERVICE DEADLINE: waits until SERVICE accepts connections on its
# gRPC port (it has joined the cluster); dies with its log's tail when it exits or at DEADLINE
# (a value of SECONDS).
_cluster_await_listening() {
  local name="$1" service="$2" deadline="$3" port pidfile logfile
  port="$(_cluster_grpc_port "$service")"
  pidfile="$(_cluster_dir "$name")/$service.pid"
  logfile="$DRIPLINE_LOGS/cluster-$name-$service.log"
  until port_listening "$port"; do
    if ! pid_alive "$pidfile"; then
      tail_log "$logfile" 40
      die "cluster '$name': $service exited during start-up"
    fi
    if ((SECONDS >= deadline)); then
      tail_log "$logfile" 40
      die "cluster '$name': $service not listening on 127.0.0.1:$port in time"
    fi
    sleep 0.2
  done
}

# cluster_start_service NAME SERVICE: starts SERVICE of the configured instance NAME as its own
# process (pid in .dripline/cluster-NAME/SERVICE.pid) unless it runs already. Does not wait.
cluster_start_service() {
  local name="$1" service="$2"
  _cluster_check_service "$service"
  _cluster_load "$name"
  local dir pidfile logfile
  dir="$(_cluster_dir "$name")"
  pidfile="$dir/$service.pid"
  logfile="$DRIPLINE_LOGS/cluster-$name-$service.log"
  if pid_alive "$pidfile"; then
    log "cluster '$name': $service already running (pid $(cat "$pidfile"))"
    return 0
  fi
  printf '\n=== %s starting %s\n' "$(date -u +%FT%TZ)" "$service" >>"$logfile"
  # setsid: its own session, so a Ctrl-C in the terminal that ran us does not reach it.
  nohup setsid "$DRIPLINE_CLUSTER_SERVER" --config-file "$dir/config-$service.yaml" --allow-no-auth \
    start --service "$service" >>"$logfile" 2>&1 </dev/null &
  echo $! >"$pidfile"
  log "cluster '$name': started $service (pid $!); log ${logfile#"$DRIPLINE_ROOT"/}"
}

# cluster_kill NAME SERVICE: SIGKILL to SERVICE (no graceful shutdown); waits until it is gone.
cluster_kill() {
  local name="$1" service="$2" pidfile pid
  _cluster_check_service "$service"
  _cluster_check_name "$name"
  pidfile="$(_cluster_dir "$name")/$service.pid"
  if ! pid_alive "$pidfile"; then
    log "cluster '$name': $service is not running"
    return 0
  fi
  pid="$(cat "$pidfile")"
  kill -KILL "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || die "cluster '$name': $service (pid $pid) still alive 30s after SIGKILL"
    sleep 0.1
  done
  rm -f "$pidfile"
  log "cluster '$name': killed $service (pid $pid, SIGKILL)"
}

# cluster_stop_service NAME SERVICE: stops SERVICE gracefully (TERM, then KILL after 30s).
cluster_stop_service() {
  _cluster_check_service "$2"
  _cluster_check_name "$1"
  stop_pidfile "cluster '$1' $2" "$(_cluster_dir "$1")/$2.pid" 30
}

# cluster_running NAME: true when any service of instance NAME runs.
cluster_running() {
  _cluster_check_name "$1"
  local service
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    pid_alive "$(_cluster_dir "$1")/$service.pid" && return 0
  done
  return 1
}

# cluster_healthy NAME: true when the instance's frontend reports SERVING and every service runs.
cluster_healthy() {
  _cluster_load "$1"
  local dir service
  dir="$(_cluster_dir "$1")"
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    pid_alive "$dir/$service.pid" || return 1
  done
  _cluster_healthy_frontend
}

# cluster_wait NAME [TIMEOUT]: waits until every service listens on its gRPC port and the frontend
# reports SERVING; dies with the logs' tails when a service exits or TIMEOUT (default 120) seconds
# pass.
cluster_wait() {
  local name="$1" timeout="${2:-120}" dir service address deadline
  _cluster_load "$name"
  dir="$(_cluster_dir "$name")"
  address="127.0.0.1:$CLUSTER_FRONTEND_PORT"
  deadline=$((SECONDS + timeout))
  [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    _cluster_await_listening "$name" "$service" "$deadline"
  done
  until _cluster_healthy_frontend; do
    for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
      if ! pid_alive "$dir/$service.pid"; then
        tail_log "$DRIPLINE_LOGS/cluster-$name-$service.log" 40
        die "cluster '$name': $service exited during start-up"
      fi
    done
    if ((SECONDS >= deadline)); then
      for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
        tail_log "$DRIPLINE_LOGS/cluster-$name-$service.log" 20
      done
      die "cluster '$name' not healthy on $address after ${timeout}s"
    fi
    sleep 0.5
  done
}

# _cluster_probe_workflow ADDRESS: starts and terminates a workflow carrying Dripline's search
# attributes on a task queue nobody polls; true when the server accepted it.
_cluster_probe_workflow() {
  local address="$1" id sa args=()
  id="dripline-cluster-probe-$$-$RANDOM"
  for sa in "${DRIPLINE_SEARCH_ATTRIBUTES[@]}"; do
    args+=(--search-attribute "$sa=\"probe\"")
  done
  timeout 20 "$TEMPORAL_BIN" workflow start --address "$address" --namespace default \
    --task-queue dripline-cluster-probe --type DriplineClusterProbe --workflow-id "$id" \
    "${args[@]}" >/dev/null 2>&1 || return 1
  timeout 20 "$TEMPORAL_BIN" workflow terminate --address "$address" --namespace default \
    --workflow-id "$id" --reason "cluster probe" >/dev/null 2>&1 || true
}

# start_cluster NAME: starts every service of the configured instance NAME that is not running,
# waits until it is healthy, and makes sure namespace default and Dripline's search attributes
# exist (as start_temporal does for the dev server). Exports DRIPLINE_CLUSTER_ADDRESS. Sets
# CLUSTER_STARTED=1 when this call started a service.
start_cluster() {
  local name="$1" dir service address
  _cluster_load "$name"
  cluster_binaries_present || die "the Temporal server $DRIPLINE_CLUSTER_VERSION is not built (ensure_cluster_binaries)"
  [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli
  dir="$(_cluster_dir "$name")"
  address="127.0.0.1:$CLUSTER_FRONTEND_PORT"
  CLUSTER_STARTED=0
  local deadline=$((SECONDS + ${DRIPLINE_CLUSTER_START_TIMEOUT:-120})) port
  # One at a time: services starting together on new databases race to write the cluster's
  # metadata, and the losers exit.
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    if ! pid_alive "$dir/$service.pid"; then
      port="$(_cluster_grpc_port "$service")"
      if port_listening "$port"; then
        die "cluster '$name': port $port on 127.0.0.1 ($service) is in use by another process; choose other ports (docs/cluster.md)"
      fi
      cluster_start_service "$name" "$service"
      CLUSTER_STARTED=1
    fi
    _cluster_await_listening "$name" "$service" "$deadline"
  done
  cluster_wait "$name" "${DRIPLINE_CLUSTER_START_TIMEOUT:-120}"
  (
    _cluster_cli_env
    if ! "$TEMPORAL_BIN" operator namespace describe --address "$address" --namespace default >/dev/null 2>&1; then
      log "cluster '$name': registering namespace default"
      "$TEMPORAL_BIN" operator namespace create --address "$address" --namespace default \
        --retention 72h >/dev/null
    fi
    ensure_search_attributes "$address" default
    # The proof that the namespace and its search attributes reached history.
    deadline=$((SECONDS + 60))
    until _cluster_probe_workflow "$address"; do
      ((SECONDS < deadline)) || die "cluster '$name': a workflow with Dripline's search attributes still cannot start after 60s"
      sleep 1
    done
  ) || exit 1
  DRIPLINE_CLUSTER_ADDRESS="$address"
  export DRIPLINE_CLUSTER_ADDRESS
  log "cluster '$name' healthy on $address ($(for s in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do printf '%s %s ' "$s" "$(cat "$dir/$s.pid")"; done))"
}

# cluster_restart NAME SERVICE: SIGKILL to SERVICE, starts it again, waits until the cluster is
# healthy.
cluster_restart() {
  cluster_kill "$1" "$2"
  cluster_start_service "$1" "$2"
  cluster_wait "$1" "${DRIPLINE_CLUSTER_START_TIMEOUT:-120}"
}

# stop_cluster NAME: stops every service of instance NAME (gracefully, in reverse start order).
stop_cluster() {
  if ! cluster_running "$1"; then
    log "cluster '$1' is not running"
    return 0
  fi
  local i
  for ((i = ${#DRIPLINE_CLUSTER_SERVICES[@]} - 1; i >= 0; i--)); do
    cluster_stop_service "$1" "${DRIPLINE_CLUSTER_SERVICES[i]}"
  done
}

# cluster_status NAME: one line per service (pid or "stopped"), then the frontend's health.
cluster_status() {
  _cluster_load "$1"
  local dir service
  dir="$(_cluster_dir "$1")"
  for service in "${DRIPLINE_CLUSTER_SERVICES[@]}"; do
    if pid_alive "$dir/$service.pid"; then
      printf '%-9s running (pid %s)\n' "$service" "$(cat "$dir/$service.pid")"
    else
      printf '%-9s stopped\n' "$service"
    fi
  done
  [[ -n "${TEMPORAL_BIN:-}" ]] || ensure_temporal_cli 2>/dev/null
  if _cluster_healthy_frontend; then
    printf 'frontend  127.0.0.1:%s SERVING\n' "$CLUSTER_FRONTEND_PORT"
  else
    printf 'frontend  127.0.0.1:%s not serving\n' "$CLUSTER_FRONTEND_PORT"
  fi
}
