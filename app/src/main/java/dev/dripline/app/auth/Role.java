package dev.dripline.app.auth;

import io.micronaut.http.HttpMethod;

/** What a credential may do with the API (spec §6.3). */
public enum Role {
  /** Reads only: {@code GET} and {@code HEAD}. */
  VIEWER,
  /** Everything. */
  OPERATOR;

  /** Whether this role may send a request with the given method. */
  public boolean mayUse(HttpMethod method) {
    return this == OPERATOR || isRead(method);
  }

  /** {@code GET} and {@code HEAD}: the only methods that never change anything. */
  public static boolean isRead(HttpMethod method) {
    return method == HttpMethod.GET || method == HttpMethod.HEAD;
  }
}
