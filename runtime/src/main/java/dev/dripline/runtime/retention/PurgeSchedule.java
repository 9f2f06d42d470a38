package dev.dripline.runtime.retention;

import dev.dripline.runtime.config.RetentionConfig;
import dev.dripline.runtime.config.TemporalConfig;
import dev.dripline.workflows.retention.PurgeWorkflow;
import dev.dripline.workflows.retention.PurgeWorkflowIds;
import io.temporal.api.enums.v1.ScheduleOverlapPolicy;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.schedules.Schedule;
import io.temporal.client.schedules.ScheduleActionStartWorkflow;
import io.temporal.client.schedules.ScheduleAlreadyRunningException;
import io.temporal.client.schedules.ScheduleClient;
import io.temporal.client.schedules.ScheduleDescription;
import io.temporal.client.schedules.ScheduleIntervalSpec;
import io.temporal.client.schedules.ScheduleOptions;
import io.temporal.client.schedules.SchedulePolicy;
import io.temporal.client.schedules.ScheduleSpec;
import io.temporal.client.schedules.ScheduleUpdate;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployment's purge schedule (spec D5), a Temporal Schedule of id {@link
 * PurgeWorkflowIds#schedule}: it starts the {@code Purge} workflow on the task queue every {@code
 * DRIPLINE_PURGE_INTERVAL}; while one runs, one more start is buffered, never two at once. Workers
 * create it at start-up ({@link #ensure}, idempotent); the API starts it at once after a run's
 * deletion ({@link #triggerSoon}), so a deleted run's batches go without waiting for the interval.
 */
@Singleton
public class PurgeSchedule {
  private static final Logger LOG = LoggerFactory.getLogger(PurgeSchedule.class);

  private final ScheduleClient schedules;
  private final TemporalConfig temporal;
  private final RetentionConfig retention;

  public PurgeSchedule(
      ScheduleClient schedules, TemporalConfig temporal, RetentionConfig retention) {
    this.schedules = schedules;
    this.temporal = temporal;
    this.retention = retention;
  }

  /** The schedule's id on this deployment's task queue. */
  public String id() {
    return PurgeWorkflowIds.schedule(temporal.taskQueue());
  }

  /**
   * Creates the schedule, or, if it exists, brings its interval and action to this configuration
   * (nothing is written when they already match). Any number of workers may call it at once: one
   * creates it, the others find it.
   *
   * @return true if this call created or changed it
   */
  public boolean ensure() {
    Schedule wanted = schedule();
    try {
      schedules.createSchedule(id(), wanted, ScheduleOptions.newBuilder().build());
      LOG.info("Created purge schedule {} (every {})", id(), retention.interval());
      return true;
    } catch (ScheduleAlreadyRunningException e) {
      boolean[] changed = {false};
      schedules
          .getHandle(id())
          .update(
              input -> {
                if (matches(input.getDescription(), wanted)) {
                  return null;
                }
                changed[0] = true;
                return new ScheduleUpdate(wanted);
              });
      if (changed[0]) {
        LOG.info("Updated purge schedule {} (every {})", id(), retention.interval());
      }
      return changed[0];
    }
  }

  /**
   * Starts a purge now (one more after the running one, if one runs). Never fails: a purge not
   * started here runs at the schedule's next time.
   */
  public void triggerSoon() {
    try {
      schedules.getHandle(id()).trigger(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE);
    } catch (RuntimeException e) {
      LOG.warn(
          "could not start the purge now ({}); it runs at the schedule's next time: {}",
          id(),
          rootCause(e));
    }
  }

  /** The innermost cause's text: a schedule call's own exception says only "Schedule exception". */
  private static String rootCause(Throwable e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return cause.toString();
  }

  private Schedule schedule() {
    return Schedule.newBuilder()
        .setAction(
            ScheduleActionStartWorkflow.newBuilder()
                .setWorkflowType(PurgeWorkflow.class)
                .setOptions(
                    WorkflowOptions.newBuilder()
                        .setWorkflowId(id())
                        .setTaskQueue(temporal.taskQueue())
                        .build())
                .build())
        .setSpec(
            ScheduleSpec.newBuilder()
                .setIntervals(List.of(new ScheduleIntervalSpec(retention.interval())))
                .build())
        .setPolicy(
            SchedulePolicy.newBuilder()
                .setOverlap(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE)
                .build())
        .build();
  }

  /** Whether {@code existing} starts the same workflow on the same queue at the same interval. */
  private static boolean matches(ScheduleDescription existing, Schedule wanted) {
    Schedule have = existing.getSchedule();
    if (!(have.getAction() instanceof ScheduleActionStartWorkflow action)) {
      return false;
    }
    ScheduleActionStartWorkflow want = (ScheduleActionStartWorkflow) wanted.getAction();
    return Objects.equals(action.getWorkflowType(), want.getWorkflowType())
        && action.getOptions() != null
        && Objects.equals(action.getOptions().getTaskQueue(), want.getOptions().getTaskQueue())
        && Objects.equals(everies(have), everies(wanted))
        && intervals(have).stream()
            .allMatch(interval -> interval.getOffset() == null || interval.getOffset().isZero())
        && have.getPolicy() != null
        && have.getPolicy().getOverlap() == wanted.getPolicy().getOverlap();
  }

  /** How often each interval of {@code schedule}'s spec fires. */
  private static List<Duration> everies(Schedule schedule) {
    return intervals(schedule).stream().map(ScheduleIntervalSpec::getEvery).toList();
  }

  /** The intervals of {@code schedule}'s spec; none if it has no spec or intervals. */
  private static List<ScheduleIntervalSpec> intervals(Schedule schedule) {
    ScheduleSpec spec = schedule.getSpec();
    return spec == null || spec.getIntervals() == null ? List.of() : spec.getIntervals();
  }
}
