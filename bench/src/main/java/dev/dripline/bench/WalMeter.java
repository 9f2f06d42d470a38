package dev.dripline.bench;

import static dev.dripline.bench.BenchMain.f;

/**
 * What a phase made PostgreSQL write: WAL bytes ({@code pg_stat_wal}) and checkpoints ({@code
 * pg_stat_bgwriter} of PostgreSQL 15, timed and requested — a requested one is forced by {@code
 * max_wal_size}, and its writes and fsyncs can stall the commits of a foreground beside a fast
 * backfill). W6 shows them per phase with the settings that decide them.
 */
final class WalMeter {
  private final Services services;

  WalMeter(Services services) {
    this.services = services;
  }

  /** Cumulative counters at one instant. */
  record Reading(long nanos, long walBytes, long timed, long requested) {}

  Reading read() {
    long[] values =
        services.queryLongs(
            "select (select wal_bytes from pg_stat_wal)::bigint, checkpoints_timed,"
                + " checkpoints_req from pg_stat_bgwriter");
    return new Reading(System.nanoTime(), values[0], values[1], values[2]);
  }

  /** WAL per second and checkpoints since {@code before}. */
  String since(Reading before) {
    Reading now = read();
    double seconds = (now.nanos() - before.nanos()) / 1e9;
    return f(
        "WAL %.1f MB/s, checkpoints %d timed %d requested",
        (now.walBytes() - before.walBytes()) / 1e6 / seconds,
        now.timed() - before.timed(),
        now.requested() - before.requested());
  }

  /** The settings that decide how much WAL a backfill makes and how often it forces checkpoints. */
  String settings() {
    return services.queryString(
        "select string_agg(name || '=' || current_setting(name), ', ' order by name)"
            + " from pg_settings where name in ('max_wal_size', 'checkpoint_timeout',"
            + " 'wal_compression', 'synchronous_commit', 'shared_buffers', 'full_page_writes',"
            + " 'backend_flush_after')");
  }
}
