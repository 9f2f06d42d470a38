package dev.dripline.store.throttle;

import java.util.Arrays;
import java.util.Optional;

/** What a health check measures; {@link #configName} is how configuration spells it. */
public enum CheckKind {
  /** A read-only query returning one number. */
  SQL("sql"),
  /** Non-idle backends other than the checker's own, optionally only the long-running ones. */
  ACTIVE_QUERIES("active-queries"),
  /** Seconds of replay lag, on a replica or (without a URL) the primary's worst replica. */
  REPLICA_LAG("replica-lag");

  private final String configName;

  CheckKind(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }

  /** The kind configuration names {@code name}, if any. */
  public static Optional<CheckKind> named(String name) {
    return Arrays.stream(values()).filter(kind -> kind.configName.equals(name)).findFirst();
  }
}
