package dev.dripline.app.audit;

import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import jakarta.inject.Singleton;

/**
 * A bean of the tests with {@link Audited} methods that are no API endpoint, as the dashboard's
 * form handlers are: one answers a refusal itself, one succeeds.
 */
@Singleton
public class AuditedForms {
  @Audited(value = "test.form-refused", run = "runId", detail = "form")
  public HttpResponse<String> refuse(long runId, String form) {
    return HttpResponse.<String>status(HttpStatus.CONFLICT)
        .body("the form again, with the error")
        .attribute(Audited.PROBLEM, "run " + runId + " is completed; its cap can no longer change");
  }

  @Audited(value = "test.form-done", subject = "name")
  public String done(String name) {
    return "done " + name;
  }
}
