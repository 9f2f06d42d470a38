package dev.dripline.runtime.throttle;

import dev.dripline.store.throttle.CheckLimits;
import dev.dripline.store.throttle.OnUnknown;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.exceptions.ConfigurationException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The configured health checks, validated. Created with the context so that an invalid check fails
 * start-up, with a message naming the check and the field.
 */
@Context
public class ThrottleChecks {
  private static final String PREFIX = "dripline.throttle.checks.";
  private static final double DEFAULT_RESUME_FRACTION = 0.8;

  /** A table, optionally schema-qualified: SQL identifiers, each plain or double-quoted. */
  private static final Pattern TABLE_NAME =
      Pattern.compile(
          "(?:\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_$]*)(?:\\.(?:\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_$]*))?");

  private final List<ThrottleCheck> checks;

  public ThrottleChecks(List<ThrottleCheckConfig> configured) {
    this.checks = validate(configured);
  }

  /** Every check, by name. */
  public List<ThrottleCheck> all() {
    return checks;
  }

  /** The check called {@code name}, if configured. */
  public Optional<ThrottleCheck> named(String name) {
    return checks.stream().filter(check -> check.name().equals(name)).findFirst();
  }

  /**
   * The checks {@code configured} describes, sorted by name.
   *
   * @throws ConfigurationException naming the first invalid check and field
   */
  public static List<ThrottleCheck> validate(List<ThrottleCheckConfig> configured) {
    List<ThrottleCheck> valid = new ArrayList<>();
    for (ThrottleCheckConfig config : configured) {
      valid.add(validate(config));
    }
    valid.sort(Comparator.comparing(ThrottleCheck::name));
    return List.copyOf(valid);
  }

  private static ThrottleCheck validate(ThrottleCheckConfig c) {
    String name = c.name();
    if (c.kind() == null) {
      throw invalid(name, "kind", "is required (one of " + CheckKind.configNames() + ")");
    }
    CheckKind kind =
        CheckKind.named(c.kind())
            .orElseThrow(
                () ->
                    invalid(
                        name,
                        "kind",
                        "'" + c.kind() + "' is not one of " + CheckKind.configNames()));
    if (c.threshold() == null) {
      throw invalid(name, "threshold", "is required");
    }
    double threshold = c.threshold();
    if (!Double.isFinite(threshold)) {
      throw invalid(name, "threshold", "must be a finite number");
    }
    // 80 % of a negative threshold would be above it: then the default leaves no band.
    double resumeBelow =
        c.resumeBelow() == null
            ? Math.min(threshold, threshold * DEFAULT_RESUME_FRACTION)
            : c.resumeBelow();
    if (!Double.isFinite(resumeBelow) || resumeBelow > threshold) {
      throw invalid(
          name,
          "resume-below",
          resumeBelow + " must be a number no greater than the threshold " + threshold);
    }
    positive(name, "interval", c.interval());
    positive(name, "timeout", c.timeout());
    OnUnknown onUnknown;
    try {
      onUnknown = OnUnknown.valueOf(c.onUnknown().trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw invalid(name, "on-unknown", "'" + c.onUnknown() + "' is not one of hold, proceed");
    }
    String query = c.query() == null || c.query().isBlank() ? null : c.query().trim();
    boolean queried = kind == CheckKind.SQL || kind == CheckKind.PROMETHEUS;
    if (queried && query == null) {
      throw invalid(name, "query", "is required for a check of kind " + kind.configName());
    }
    if (!queried && query != null) {
      throw invalid(name, "query", "applies only to a check of kind sql or prometheus");
    }
    if (c.olderThan() != null) {
      if (kind != CheckKind.ACTIVE_QUERIES) {
        throw invalid(name, "older-than", "applies only to a check of kind active-queries");
      }
      if (c.olderThan().isNegative()) {
        throw invalid(name, "older-than", "must not be negative");
      }
    }
    String url = c.url() == null || c.url().isBlank() ? null : c.url().trim();
    if (kind == CheckKind.PROMETHEUS) {
      url = prometheusUrl(name, url);
      if (c.user() != null || c.password() != null) {
        throw invalid(name, "user", "and password apply only to a jdbc:postgresql: url");
      }
    } else {
      if (url != null && !url.startsWith("jdbc:postgresql:")) {
        throw invalid(name, "url", "must be a jdbc:postgresql: URL");
      }
      if (url == null && (c.user() != null || c.password() != null)) {
        throw invalid(name, "user", "and password apply only with a url");
      }
    }
    List<String> tables = tables(name, kind, c.tables());
    List<String> appliesTo = c.appliesTo() == null ? List.of() : List.copyOf(c.appliesTo());
    return new ThrottleCheck(
        name,
        kind,
        new CheckLimits(threshold, resumeBelow, onUnknown),
        c.interval(),
        appliesTo,
        query,
        c.timeout(),
        c.olderThan(),
        url,
        c.user(),
        c.password(),
        tables);
  }

  /** The Prometheus base URL of a {@code prometheus} check, without a trailing slash. */
  private static String prometheusUrl(String name, String url) {
    if (url == null) {
      throw invalid(name, "url", "is required for a check of kind prometheus (its base URL)");
    }
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      throw invalid(name, "url", "'" + url + "' is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
      throw invalid(name, "url", "must be an http:// or https:// URL of Prometheus");
    }
    if (uri.getQuery() != null || uri.getFragment() != null) {
      throw invalid(name, "url", "must be Prometheus's base URL, without a query or fragment");
    }
    return url.replaceAll("/+$", "");
  }

  /** The {@code autovacuum} check's extra tables: plain or schema-qualified names. */
  private static List<String> tables(String name, CheckKind kind, List<String> configured) {
    if (configured == null || configured.isEmpty()) {
      return List.of();
    }
    if (kind != CheckKind.AUTOVACUUM) {
      throw invalid(name, "tables", "applies only to a check of kind autovacuum");
    }
    List<String> tables = new ArrayList<>();
    for (String table : configured) {
      String trimmed = table == null ? "" : table.trim();
      if (!TABLE_NAME.matcher(trimmed).matches()) {
        throw invalid(
            name, "tables", "'" + table + "' is not a table name (table or schema.table)");
      }
      tables.add(trimmed);
    }
    return List.copyOf(tables);
  }

  private static void positive(String name, String field, Duration value) {
    if (value.isZero() || value.isNegative()) {
      throw invalid(name, field, "must be a positive duration");
    }
  }

  private static ConfigurationException invalid(String name, String field, String problem) {
    return new ConfigurationException(PREFIX + name + "." + field + ": " + problem);
  }
}
