#!/bin/sh
# Starts one Dripline process. Role: $1 if it is a known role, else $DRIPLINE_ROLE (default app).
#   app | worker | standalone   -> exec java … <main class>
#   migrate                     -> applies pending migrations and exits 0, or non-zero on failure
#   anything else               -> exec'd as a command
# Extra JVM options: DRIPLINE_JAVA_OPTS (word-split), on top of JAVA_TOOL_OPTIONS.
# Your own backfill definitions: the jars in DRIPLINE_EXTRA_LIB_DIR (default /opt/dripline/extra,
# e.g. a mounted volume) join the classpath after Dripline's; the image itself carries none.
set -eu

LIB_DIR="${DRIPLINE_LIB_DIR:-/opt/dripline/lib}"
EXTRA_LIB_DIR="${DRIPLINE_EXTRA_LIB_DIR:-/opt/dripline/extra}"

role="${DRIPLINE_ROLE:-app}"
case "${1:-}" in
  app | worker | standalone | migrate)
    role="$1"
    shift
    ;;
  "") ;;
  *) exec "$@" ;;
esac

# Micronaut environments: the role's own (api / worker) first, then any the operator set.
with_env() {
  if [ -n "${MICRONAUT_ENVIRONMENTS:-}" ]; then
    MICRONAUT_ENVIRONMENTS="$1,$MICRONAUT_ENVIRONMENTS"
  else
    MICRONAUT_ENVIRONMENTS="$1"
  fi
  export MICRONAUT_ENVIRONMENTS
}

case "$role" in
  app)
    main=dev.dripline.app.AppApplication
    with_env api
    # The API process never hosts a worker, whatever else is configured.
    export DRIPLINE_WORKER_ENABLED=false
    ;;
  worker)
    main=dev.dripline.worker.WorkerApplication
    with_env worker
    ;;
  standalone)
    main=dev.dripline.standalone.StandaloneApplication
    ;;
  migrate)
    # Once per deploy, before the app and the workers start (they run with
    # DRIPLINE_MIGRATE_ON_START=false and wait for the schema).
    main=dev.dripline.store.migration.Migrate
    ;;
  *)
    echo "entrypoint: unknown DRIPLINE_ROLE '$role' (expected app, worker, standalone or migrate)" >&2
    exit 64
    ;;
esac

if [ ! -d "$LIB_DIR" ]; then
  echo "entrypoint: no jar directory $LIB_DIR" >&2
  exit 66
fi

classpath="$LIB_DIR/*"
if [ -d "$EXTRA_LIB_DIR" ]; then
  classpath="$classpath:$EXTRA_LIB_DIR/*"
fi

# shellcheck disable=SC2086 # DRIPLINE_JAVA_OPTS is split into words on purpose
exec java ${DRIPLINE_JAVA_OPTS:-} -cp "$classpath" "$main" "$@"
