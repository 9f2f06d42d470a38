package dev.dripline.runtime.throttle;

import java.util.Arrays;
import java.util.Optional;

/** What a health check measures; {@link #configName} is how configuration spells it. */
public enum CheckKind {
  /** A read-only query returning one number. */
  SQL("sql"),
  /** Non-idle backends other than the checker's own, optionally only the long-running ones. */
  ACTIVE_QUERIES("active-queries"),
  /** Seconds of replay lag, on a replica or (without a URL) the primary's worst replica. */
  REPLICA_LAG("replica-lag"),
  /** Autovacuum workers on a table the backfills it applies to declare they write. */
  AUTOVACUUM("autovacuum"),
  /** A Prometheus instant query returning one number. */
  PROMETHEUS("prometheus");

  private final String configName;

  CheckKind(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }

  /** How configuration spells every kind, in declaration order, e.g. for a message. */
  public static String configNames() {
    return String.join(", ", Arrays.stream(values()).map(CheckKind::configName).toList());
  }

  /** The kind configuration names {@code name}, if any. */
  public static Optional<CheckKind> named(String name) {
    return Arrays.stream(values()).filter(kind -> kind.configName.equals(name)).findFirst();
  }
}
