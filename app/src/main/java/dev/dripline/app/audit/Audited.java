package dev.dripline.app.audit;

import io.micronaut.aop.Around;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Records each call of the method in the audit trail (O4) once it has returned or thrown: who (the
 * current request's caller), what ({@link #value} and the arguments named here) and the outcome —
 * accepted with the status answered, or rejected with the problem's status and detail. Usable on
 * any bean method that serves a request: the API's controllers, the dashboard's form handlers.
 * {@link AuditInterceptor} does the recording.
 *
 * <p>Arguments are named by their parameter names, e.g. {@code @Audited(value = "run.stop", run =
 * "id")} on {@code stop(@PathVariable String id)}.
 *
 * <p>A method that answers a refusal itself instead of throwing (a form rendered again with the
 * error next to its field) returns an {@code HttpResponse} with the refusal's status (4xx) and, as
 * its attribute {@link #PROBLEM}, the problem's detail: it is recorded as rejected with both.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Around
public @interface Audited {
  /**
   * The attribute of a returned {@code HttpResponse} holding why the action was refused, when the
   * method answers the refusal itself.
   */
  String PROBLEM = "dripline.audit.problem";

  /**
   * The attributes of a returned {@code HttpResponse} naming what the action named when it is not
   * an argument (a dashboard form's field): the run's id ({@code Long}), the subject and what was
   * asked (both {@code String}). They replace what the annotation's members name.
   */
  String RUN = "dripline.audit.run";

  /** See {@link #RUN}. */
  String SUBJECT = "dripline.audit.subject";

  /** See {@link #RUN}. Never a secret. */
  String DETAIL = "dripline.audit.detail";

  /**
   * The attribute of a returned {@code HttpResponse} ({@code Boolean.TRUE}) saying the call was a
   * preview that changed nothing, like {@link #previewWhen}: it is not recorded.
   */
  String PREVIEW = "dripline.audit.preview";

  /**
   * The request attribute naming the caller when the request has no {@code Authentication} (the
   * dashboard's session sets it: {@code operator}).
   */
  String ACTOR = "dripline.audit.actor";

  /** The action's name, {@code <thing>.<verb>}: {@code run.stop}, {@code pool.put}, … */
  String value();

  /**
   * The parameter holding the run's id (a number or its text; text that is no id is recorded as the
   * subject). A run returned by the method ({@code RunResponse}) is recorded too.
   */
  String run() default "";

  /**
   * The parameter holding the target's name. A target returned by the method ({@code
   * TargetResponse}) is recorded too.
   */
  String target() default "";

  /** The parameter holding what else the action names: a pool, a throttle check, a webhook. */
  String subject() default "";

  /**
   * The parameter whose value is recorded as what was asked (a request body), abbreviated. Never
   * name one that may hold a secret.
   */
  String detail() default "";

  /**
   * The parameter that, when {@code true}, makes the call a preview that changes nothing (a dry
   * run): such a call is not recorded.
   */
  String previewWhen() default "";
}
