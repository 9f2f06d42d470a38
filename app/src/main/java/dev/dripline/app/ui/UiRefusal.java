package dev.dripline.app.ui;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpStatus;

/** A dashboard request refused before anything was done; {@link UiRefusalHandler} shows it. */
public class UiRefusal extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final HttpStatus status;
  @Nullable private final transient UiSession session;

  public UiRefusal(HttpStatus status, String detail, @Nullable UiSession session) {
    super(detail);
    this.status = status;
    this.session = session;
  }

  public HttpStatus status() {
    return status;
  }

  @Nullable
  public UiSession session() {
    return session;
  }
}
