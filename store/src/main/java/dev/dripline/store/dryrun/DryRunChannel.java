package dev.dripline.store.dryrun;

/**
 * How the app and the workers talk about a dry run (K5 in docs/spec.md): PostgreSQL notifications,
 * so that a dry run saves no row and starts no workflow, and reaches whichever worker hosts the
 * definition (the app never loads backfill code). The app sends a {@link DryRunRequest} on {@link
 * #REQUESTS} and listens on {@link #ANSWERS}; a worker that hosts the definition, and wins the
 * request's advisory lock, plans and answers. A payload is at most {@link #MAX_PAYLOAD} bytes
 * (PostgreSQL's limit is 8000).
 */
public final class DryRunChannel {
  public static final String REQUESTS = "dripline_dry_runs";
  public static final String ANSWERS = "dripline_dry_run_answers";
  public static final int MAX_PAYLOAD = 7900;

  private DryRunChannel() {}
}
