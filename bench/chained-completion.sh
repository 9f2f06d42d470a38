#!/usr/bin/env bash
# The PostgreSQL cost of one chained completion (dripline_complete_and_claim_next), alone: no
# Temporal, no JVM. Makes a scratch database from the migrations, one running run with a chain's
# head running and --batches pending batches, --runs - 1 other (completed) runs beside it, then
# calls the function --calls times in one session, each call its own transaction
# (synchronous_commit off, so the figure is CPU, not the WAL's flush), --reps times.
#
#   bench/chained-completion.sh [--calls 3000] [--reps 3] [--runs 1] [--batches 20000]
#                               [--migrations DIR]
#
# --migrations: another checkout's store/src/main/resources/db/migration, to compare releases
# side by side (e.g. from `git worktree add /tmp/before <commit>`).
# Prints microseconds per call. Connects as PG* say (default: dripline@127.0.0.1, password
# dripline); the database (default dripline_chain_bench, --db) is dropped and made again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

calls=3000 reps=3 runs=1 batches=20000 db=dripline_chain_bench
migrations=store/src/main/resources/db/migration
while (($#)); do
  case "$1" in
    --calls) calls="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --migrations) migrations="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
export PGHOST="${PGHOST:-127.0.0.1}" PGUSER="${PGUSER:-dripline}" PGPASSWORD="${PGPASSWORD:-dripline}"
psql=(psql -q -X -v ON_ERROR_STOP=1)

"${psql[@]}" -d postgres -c "set client_min_messages = warning" -c "drop database if exists $db" \
  -c "create database $db" >/dev/null
for f in $(cd "$migrations" && for m in V*.sql; do
             v="${m%%__*}"; v="${v#V}"; printf '%s %s\n' "${v//_/.}" "$m"
           done | sort -V | cut -d' ' -f2); do
  "${psql[@]}" -d "$db" -f "$migrations/$f" >/dev/null
done
"${psql[@]}" -d "$db" -f bench/sql/chained-completion.sql >/dev/null

echo "chained completions: $calls calls per rep, $runs runs stored, $batches batches in the run, migrations $migrations"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), PostgreSQL $("${psql[@]}" -At -d "$db" -c 'show server_version')"
for ((rep = 1; rep <= reps; rep++)); do
  "${psql[@]}" -d "$db" -c "call chain_bench_setup($runs, $batches)" >/dev/null
  us=$("${psql[@]}" -At -d "$db" -c "set synchronous_commit = off" \
         -c "call chain_bench_run($calls)" 2>&1 | sed -n 's/.*per call: \([0-9.]*\) us.*/\1/p')
  echo "rep $rep: $us us per call"
done
"${psql[@]}" -d postgres -c "drop database $db" >/dev/null
