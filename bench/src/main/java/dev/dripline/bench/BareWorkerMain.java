package dev.dripline.bench;

import io.temporal.client.WorkflowClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerOptions;
import java.util.concurrent.CountDownLatch;

/**
 * The baseline's worker JVM: registers {@link BareLoopWorkflowImpl} and {@link NoopActivities} on
 * its own task queue with the same worker settings Dripline's worker gets in W1. Arguments: {@code
 * ADDRESS TASK_QUEUE MAX_CONCURRENT_ACTIVITIES MAX_CONCURRENT_WORKFLOW_TASKS}. Prints {@code READY}
 * once polling.
 */
public final class BareWorkerMain {
  private BareWorkerMain() {}

  public static void main(String[] args) throws InterruptedException {
    String address = args[0];
    String taskQueue = args[1];
    int activities = Integer.parseInt(args[2]);
    int workflowTasks = Integer.parseInt(args[3]);
    WorkflowServiceStubs service =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setTarget(address).build());
    WorkflowClient client = WorkflowClient.newInstance(service);
    WorkerFactory factory = WorkerFactory.newInstance(client);
    Worker worker =
        factory.newWorker(
            taskQueue,
            WorkerOptions.newBuilder()
                .setMaxConcurrentActivityExecutionSize(activities)
                .setMaxConcurrentWorkflowTaskExecutionSize(workflowTasks)
                .build());
    worker.registerWorkflowImplementationTypes(BareLoopWorkflowImpl.class);
    worker.registerActivitiesImplementations(new NoopActivities.Impl());
    factory.start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  factory.shutdownNow();
                  service.shutdownNow();
                  stopped.countDown();
                }));
    System.out.println("READY");
    System.out.flush();
    stopped.await();
  }
}
