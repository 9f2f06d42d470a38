package dev.dripline.app.auth;

/** A {@link Profile} for tests outside this package, without an application context. */
public final class ProfileAccess {
  private ProfileAccess() {}

  /** The development profile. */
  public static Profile development() {
    return new Profile(false);
  }
}
