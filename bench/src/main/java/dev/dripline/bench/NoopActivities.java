package dev.dripline.bench;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** The baseline's unit of work: an activity that does nothing. */
@ActivityInterface
public interface NoopActivities {
  @ActivityMethod(name = "BenchNoop")
  void noop(long index);

  /** The implementation: returns at once. */
  final class Impl implements NoopActivities {
    @Override
    public void noop(long index) {
      // Nothing: the benchmark measures orchestration alone.
    }
  }
}
