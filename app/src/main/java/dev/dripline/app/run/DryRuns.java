package dev.dripline.app.run;

import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunRequest;
import dev.dripline.workflows.dryrun.DryRunStart;
import dev.dripline.workflows.dryrun.DryRunWorkflow;
import io.micronaut.context.annotation.Value;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowStub;
import jakarta.inject.Singleton;
import java.text.NumberFormat;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Asks the workers to plan a dry run (K5 in docs/spec.md) and waits for the answer: the app never
 * loads backfill code. The dry run is a short workflow of its own ({@link DryRunWorkflow}) on the
 * task queue, whose one activity a worker that hosts the definition carries out; it touches no run
 * and saves nothing. Its execution timeout is the wait, so one that no worker answers ends on the
 * server as the API gives up, and nothing is held meanwhile but this request's thread.
 */
@Singleton
public class DryRuns {
  /** Beyond the execution's timeout, for the timed-out outcome itself to reach the API. */
  private static final Duration OUTCOME_GRACE = Duration.ofSeconds(5);

  private final WorkflowClient client;
  private final TemporalConfig temporal;
  private final Duration timeout;

  public DryRuns(
      WorkflowClient client,
      TemporalConfig temporal,
      @Value("${dripline.api.dry-run-timeout:30s}") Duration timeout) {
    this.client = client;
    this.temporal = temporal;
    this.timeout = timeout;
  }

  /**
   * The answer of a worker that hosts {@code request}'s definition.
   *
   * @throws UnavailableProblem when none answers within the timeout, or Temporal cannot be reached
   */
  DryRunAnswer ask(DryRunRequest request) {
    DryRunWorkflow workflow =
        client.newWorkflowStub(
            DryRunWorkflow.class,
            DryRunStart.options(
                    UUID.randomUUID().toString(), temporal.taskQueue(), request.backfill(), timeout)
                .setStaticSummary(summary(request))
                .build());
    try {
      WorkflowClient.start(workflow::plan, request);
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not start the dry run of " + request.backfill() + " (Temporal: " + reason(e) + ")",
          e);
    }
    try {
      return WorkflowStub.fromTyped(workflow)
          .getResult(
              timeout.plus(OUTCOME_GRACE).toMillis(), TimeUnit.MILLISECONDS, DryRunAnswer.class);
    } catch (TimeoutException e) {
      throw unanswered(request, e);
    } catch (WorkflowFailedException e) {
      if (DryRunStart.timedOut(e)) {
        throw unanswered(request, e);
      }
      throw new UnavailableProblem(
          "the dry run of " + request.backfill() + " failed (Temporal: " + reason(e) + ")", e);
    } catch (RuntimeException e) {
      throw new UnavailableProblem(
          "could not wait for the dry run of "
              + request.backfill()
              + " (Temporal: "
              + reason(e)
              + ")",
          e);
    }
  }

  private UnavailableProblem unanswered(DryRunRequest request, Exception cause) {
    return new UnavailableProblem(
        "no worker that hosts "
            + request.backfill()
            + " answered the dry run within "
            + timeout.toSeconds()
            + " s",
        cause);
  }

  /** The one-line summary the Web UI shows, e.g. "dry run of example.sleep · batch size 10". */
  static String summary(DryRunRequest request) {
    NumberFormat number = NumberFormat.getIntegerInstance(Locale.US);
    StringBuilder text =
        new StringBuilder("dry run of ")
            .append(request.backfill())
            .append(" · batch size ")
            .append(number.format(request.batchSize()));
    if (request.maxRecords() != null) {
      text.append(" · ").append(number.format(request.maxRecords())).append(" keys max");
    }
    return text.toString();
  }

  private static String reason(RuntimeException e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return String.valueOf(cause.getMessage());
  }
}
