package dev.dripline.app.audit;

import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.run.RunResponse;
import dev.dripline.app.targets.TargetResponse;
import dev.dripline.app.webhooks.CreatedWebhookResponse;
import dev.dripline.store.audit.AuditEvent;
import io.micronaut.aop.InterceptorBean;
import io.micronaut.aop.MethodInterceptor;
import io.micronaut.aop.MethodInvocationContext;
import io.micronaut.core.annotation.AnnotationValue;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Status;
import io.micronaut.http.context.ServerRequestContext;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.utils.SecurityService;
import jakarta.inject.Singleton;
import java.util.Map;

/**
 * Records the calls of {@link Audited} methods in the audit trail, after the call: an action is
 * recorded with the outcome it had, never before it is known. The caller is the current request's
 * {@link Authentication} (its name: the token's role, {@code operator}); the run, target, subject
 * and detail are the arguments the annotation names, and a run, target or webhook the method
 * returns, or what the returned response's attributes name ({@link Audited#RUN}). A call that
 * throws is recorded as rejected with the problem's status and detail (500 for anything that is not
 * a problem), and the exception goes on unchanged to the handlers that answer it.
 *
 * <p>The write ({@link AuditTrail#record}) cannot fail the call: the action is done (or refused) by
 * then, and answering a done action with a 500 would only have it sent again. A failed write is
 * logged at ERROR with the whole entry.
 */
@Singleton
@InterceptorBean(Audited.class)
public class AuditInterceptor implements MethodInterceptor<Object, Object> {
  /** The longest detail recorded; a longer one keeps its start. */
  static final int MAX_DETAIL = 2_000;

  private final AuditTrail trail;
  private final SecurityService security;

  public AuditInterceptor(AuditTrail trail, SecurityService security) {
    this.trail = trail;
    this.security = security;
  }

  @Override
  public @Nullable Object intercept(MethodInvocationContext<Object, Object> context) {
    AnnotationValue<Audited> audited = context.getAnnotation(Audited.class);
    if (audited == null) {
      return context.proceed();
    }
    Map<String, Object> arguments = context.getParameterValueMap();
    if (preview(audited, arguments)) {
      return context.proceed();
    }
    Object result;
    try {
      result = context.proceed();
    } catch (RuntimeException e) {
      if (!(e instanceof Refusal refusal && refusal.ofTheCaller())) {
        trail.record(entry(audited, arguments, null, rejection(e)));
      }
      throw e;
    }
    int status;
    String problem = null;
    if (result instanceof HttpResponse<?> response) {
      if (response.getAttribute(Audited.PREVIEW, Boolean.class).orElse(false)) {
        return result;
      }
      status = response.getStatus().getCode();
      problem = storable(response.getAttribute(Audited.PROBLEM, String.class).orElse(null));
    } else {
      status =
          context
              .enumValue(Status.class, HttpStatus.class)
              .map(HttpStatus::getCode)
              .orElse(HttpStatus.OK.getCode());
    }
    Outcome outcome =
        new Outcome(status >= 400 ? AuditEvent.REJECTED : AuditEvent.ACCEPTED, status, problem);
    trail.record(entry(audited, arguments, result, outcome));
    return result;
  }

  private record Outcome(String outcome, int status, @Nullable String problem) {}

  private static Outcome rejection(RuntimeException e) {
    if (e instanceof ProblemException problem) {
      return new Outcome(
          AuditEvent.REJECTED,
          problem.toProblem().status(),
          storable(problem.toProblem().detail()));
    }
    if (e instanceof Refusal refusal) {
      return new Outcome(AuditEvent.REJECTED, refusal.statusCode(), storable(refusal.getMessage()));
    }
    return new Outcome(
        AuditEvent.REJECTED,
        HttpStatus.INTERNAL_SERVER_ERROR.getCode(),
        "unexpected error (" + e.getClass().getSimpleName() + "; see the app's log)");
  }

  private AuditEvent entry(
      AnnotationValue<Audited> audited,
      Map<String, Object> arguments,
      @Nullable Object result,
      Outcome outcome) {
    Long runId = null;
    String subject = text(argument(audited, "subject", arguments));
    Object run = argument(audited, "run", arguments);
    if (run != null) {
      runId = runId(run);
      if (runId == null && subject == null) {
        subject = abbreviated(String.valueOf(run));
      }
    }
    String target = text(argument(audited, "target", arguments));
    String detail = text(argument(audited, "detail", arguments));
    Object body = result instanceof HttpResponse<?> response ? response.body() : result;
    if (body instanceof RunResponse created) {
      runId = created.id();
    } else if (body instanceof TargetResponse created) {
      target = created.name();
    } else if (body instanceof CreatedWebhookResponse created) {
      subject = String.valueOf(created.id());
    }
    if (result instanceof HttpResponse<?> response) {
      runId = response.getAttribute(Audited.RUN, Long.class).orElse(runId);
      subject = text(response.getAttribute(Audited.SUBJECT, String.class).orElse(subject));
      detail = text(response.getAttribute(Audited.DETAIL, String.class).orElse(detail));
    }
    return new AuditEvent(
        null,
        null,
        actor(),
        audited.getRequiredValue(String.class),
        runId,
        target,
        subject,
        detail,
        outcome.outcome(),
        outcome.status(),
        outcome.problem(),
        null);
  }

  /**
   * Who called: the request's {@link Authentication} (the API), else the name the request carries
   * as {@link Audited#ACTOR} (the dashboard's session).
   */
  private String actor() {
    return security
        .getAuthentication()
        .map(Authentication::getName)
        .or(
            () ->
                ServerRequestContext.currentRequest()
                    .flatMap(request -> request.getAttribute(Audited.ACTOR, String.class)))
        .orElse("anonymous");
  }

  private static boolean preview(AnnotationValue<Audited> audited, Map<String, Object> arguments) {
    Object flag = argument(audited, "previewWhen", arguments);
    return flag != null && String.valueOf(flag).trim().equalsIgnoreCase("true");
  }

  /** The value of the parameter the annotation's {@code member} names, if it names one. */
  private static @Nullable Object argument(
      AnnotationValue<Audited> audited, String member, Map<String, Object> arguments) {
    return audited
        .stringValue(member)
        .filter(name -> !name.isEmpty())
        .map(arguments::get)
        .orElse(null);
  }

  private static @Nullable Long runId(Object value) {
    if (value instanceof Number number) {
      return number.longValue();
    }
    try {
      long id = Long.parseLong(String.valueOf(value).trim());
      return id > 0 ? id : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static @Nullable String text(@Nullable Object value) {
    if (value == null) {
      return null;
    }
    String text = String.valueOf(value).strip();
    return text.isEmpty() ? null : abbreviated(text);
  }

  private static String abbreviated(String text) {
    return storable(
        text.length() <= MAX_DETAIL
            ? text
            : text.substring(0, MAX_DETAIL) + "… (" + text.length() + " chars)");
  }

  /**
   * {@code text} as PostgreSQL can store it: a NUL or a surrogate without its pair (hostile input,
   * or a pair cut by the abbreviation) becomes U+FFFD, so the entry is written rather than lost.
   */
  static @Nullable String storable(@Nullable String text) {
    if (text == null) {
      return null;
    }
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        out.append(c).append(text.charAt(++i));
      } else if (c == 0 || Character.isSurrogate(c)) {
        out.append('\uFFFD');
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
