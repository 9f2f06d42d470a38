package dev.dripline.target;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The line of pending targets for capacity (spec T1, T2): capacity goes to the eligible target that
 * has waited longest. A pending target's place is when it became eligible — the later of when it
 * entered pending_backfill ({@code waiting_since}) and when its backoff ends ({@code
 * next_attempt_at}) — then its name. Free capacity serves the line from its head: a target whose
 * group is full is passed over (it takes nothing), every other one takes a slot, until no slot is
 * left.
 *
 * <p>These are reads; a caller that acts on them re-reads under the capacity lock. A lost capacity
 * race writes nothing, so a target keeps its place while it waits.
 */
public final class TargetLine {
  private TargetLine() {}

  /** A pending target's place in line, as SQL over the targets row {@code t}. */
  static String place(String t) {
    return "greatest("
        + t
        + ".waiting_since, coalesce("
        + t
        + ".next_attempt_at, "
        + t
        + ".waiting_since))";
  }

  /** Free slots: global and per group (groups read once, as they are met). */
  private static final class FreeSlots {
    private final int groupMax;
    private final Map<String, Integer> backfillingPerGroup = new HashMap<>();
    private final Map<String, Integer> taken = new HashMap<>();
    private int global;

    private FreeSlots(Connection connection, int globalMax, int groupMax) throws SQLException {
      this.groupMax = groupMax;
      int backfilling = 0;
      try (PreparedStatement count =
              connection.prepareStatement(
                  "select group_name, count(*) from targets where state = 'backfilling'"
                      + " group by group_name");
          ResultSet rs = count.executeQuery()) {
        while (rs.next()) {
          int n = rs.getInt(2);
          backfilling += n;
          if (rs.getString(1) != null) {
            backfillingPerGroup.put(rs.getString(1), n);
          }
        }
      }
      global = globalMax - backfilling;
    }

    boolean any() {
      return global > 0;
    }

    boolean fits(String group) {
      return global > 0
          && (group == null
              || groupMax
                      - backfillingPerGroup.getOrDefault(group, 0)
                      - taken.getOrDefault(group, 0)
                  > 0);
    }

    void take(String group) {
      global--;
      if (group != null) {
        taken.merge(group, 1, Integer::sum);
      }
    }
  }

  /**
   * Whether free capacity serves {@code target} now, after every eligible target ahead of it has
   * taken what it can. Answers false at once when no slot is free for it at all.
   */
  public static boolean serves(
      Connection connection, TargetSnapshot target, int globalMax, int groupMax)
      throws SQLException {
    FreeSlots free = new FreeSlots(connection, globalMax, groupMax);
    if (!free.fits(target.group())) {
      return false;
    }
    try (PreparedStatement ahead =
        connection.prepareStatement(
            "select t.name, t.group_name from targets t, targets me"
                + " where me.name = ? and t.state = 'pending_backfill' and t.name <> me.name"
                + " and "
                + place("t")
                + " <= now()"
                + " and ("
                + place("t")
                + ", t.name) < ("
                + place("me")
                + ", me.name)"
                + " order by "
                + place("t")
                + ", t.name")) {
      ahead.setFetchSize(100);
      ahead.setString(1, target.name());
      try (ResultSet rs = ahead.executeQuery()) {
        while (rs.next() && free.any()) {
          String group = rs.getString(2);
          if (free.fits(group)) {
            free.take(group);
          }
        }
      }
    }
    return free.fits(target.group());
  }

  /** The eligible targets free capacity serves now, head of the line first (to wake them). */
  public static List<String> served(Connection connection, int globalMax, int groupMax)
      throws SQLException {
    FreeSlots free = new FreeSlots(connection, globalMax, groupMax);
    List<String> served = new ArrayList<>();
    if (!free.any()) {
      return served;
    }
    try (PreparedStatement line =
        connection.prepareStatement(
            "select t.name, t.group_name from targets t where t.state = 'pending_backfill'"
                + " and "
                + place("t")
                + " <= now()"
                + " order by "
                + place("t")
                + ", t.name")) {
      line.setFetchSize(100);
      try (ResultSet rs = line.executeQuery()) {
        while (rs.next() && free.any()) {
          String group = rs.getString(2);
          if (free.fits(group)) {
            free.take(group);
            served.add(rs.getString(1));
          }
        }
      }
    }
    return served;
  }
}
