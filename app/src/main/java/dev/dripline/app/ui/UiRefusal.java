package dev.dripline.app.ui;

import dev.dripline.app.audit.Refusal;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpStatus;

/**
 * A dashboard request refused before anything was done; {@link UiRefusalHandler} shows it. One
 * {@link #ofTheCaller} (no session, a wrong form token) is not recorded in the audit trail.
 */
public class UiRefusal extends RuntimeException implements Refusal {
  private static final long serialVersionUID = 1L;

  private final HttpStatus status;
  @Nullable private final transient UiSession session;
  private final boolean ofTheCaller;

  public UiRefusal(HttpStatus status, String detail, @Nullable UiSession session) {
    this(status, detail, session, false);
  }

  private UiRefusal(
      HttpStatus status, String detail, @Nullable UiSession session, boolean ofTheCaller) {
    super(detail);
    this.status = status;
    this.session = session;
    this.ofTheCaller = ofTheCaller;
  }

  /** A refusal of the caller (no session, a wrong form token), not of what they asked. */
  static UiRefusal ofCaller(HttpStatus status, String detail, @Nullable UiSession session) {
    return new UiRefusal(status, detail, session, true);
  }

  @Override
  public int statusCode() {
    return status.getCode();
  }

  @Override
  public boolean ofTheCaller() {
    return ofTheCaller;
  }

  public HttpStatus status() {
    return status;
  }

  @Nullable
  public UiSession session() {
    return session;
  }
}
