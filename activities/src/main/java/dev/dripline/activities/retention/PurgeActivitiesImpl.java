package dev.dripline.activities.retention;

import dev.dripline.workflows.retention.PurgeActivities;
import dev.dripline.workflows.retention.PurgeReport;
import dev.dripline.workflows.retention.PurgeRequest;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import jakarta.inject.Singleton;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PurgeActivities}: runs the {@link Purger} for up to the request's budget, heartbeating the
 * running total after every delete statement; a retried attempt starts from the total its
 * predecessor last heartbeated, and from whatever the tables still hold.
 */
@Singleton
public class PurgeActivitiesImpl implements PurgeActivities {
  private static final Logger LOG = LoggerFactory.getLogger(PurgeActivitiesImpl.class);

  private final Purger purger;

  public PurgeActivitiesImpl(Purger purger) {
    this.purger = purger;
  }

  @Override
  public PurgeReport purge(PurgeRequest request) {
    ActivityExecutionContext context = Activity.getExecutionContext();
    PurgeReport done = context.getHeartbeatDetails(PurgeReport.class).orElse(PurgeReport.NONE);
    PurgeReport report =
        purger.purge(Duration.ofMillis(request.budgetMillis()), done, context::heartbeat);
    if (report.rows() > 0) {
      LOG.info(
          "purged {} batches of deleted runs, {} of runs past the retention, {} webhook rows, {}"
              + " audit events{}",
          report.deletedRunBatches(),
          report.endedRunBatches(),
          report.webhookRows(),
          report.auditEvents(),
          report.more() ? "; more to do" : "");
    }
    return report;
  }
}
