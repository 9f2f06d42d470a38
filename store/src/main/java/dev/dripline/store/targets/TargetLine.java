package dev.dripline.store.targets;

import dev.dripline.workflows.targets.TargetSnapshot;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The line of pending targets for capacity (spec T1, T2): capacity goes to the eligible target that
 * has waited longest. A pending target's place is when it became eligible — the later of when it
 * entered pending_backfill ({@code waiting_since}) and when its backoff ends ({@code
 * next_attempt_at}) — then its name ({@link TargetRepository#PLACE}). Free capacity serves the line
 * from its head: a target whose group is full is passed over (it takes nothing), every other one
 * takes a slot, until no slot is left.
 *
 * <p>These are reads; a caller that acts on them re-reads under the capacity lock ({@link
 * TargetRepository#lockCapacity}) in the same transaction. A lost capacity race writes nothing, so
 * a target keeps its place while it waits.
 */
@Singleton
public class TargetLine {
  private final TargetRepository targets;

  public TargetLine(TargetRepository targets) {
    this.targets = targets;
  }

  /** Free slots: global and per group. */
  private static final class FreeSlots {
    private final int groupMax;
    private final Map<String, Integer> backfillingPerGroup = new HashMap<>();
    private final Map<String, Integer> taken = new HashMap<>();
    private int global;

    private FreeSlots(List<GroupLoad> loads, int globalMax, int groupMax) {
      this.groupMax = groupMax;
      int backfilling = 0;
      for (GroupLoad load : loads) {
        backfilling += load.backfilling();
        if (load.groupName() != null) {
          backfillingPerGroup.put(load.groupName(), load.backfilling());
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

  private FreeSlots free(int globalMax, int groupMax) {
    return new FreeSlots(targets.backfillingPerGroup(), globalMax, groupMax);
  }

  /**
   * Whether free capacity serves {@code target} now, after every eligible target ahead of it has
   * taken what it can. Answers false at once when no slot is free for it at all.
   */
  public boolean serves(TargetSnapshot target, int globalMax, int groupMax) {
    FreeSlots free = free(globalMax, groupMax);
    if (!free.fits(target.group())) {
      return false;
    }
    for (LinePlace ahead : targets.aheadOf(target.name())) {
      if (!free.any()) {
        break;
      }
      if (free.fits(ahead.groupName())) {
        free.take(ahead.groupName());
      }
    }
    return free.fits(target.group());
  }

  /** The eligible targets free capacity serves now, head of the line first (to wake them). */
  public List<String> served(int globalMax, int groupMax) {
    FreeSlots free = free(globalMax, groupMax);
    List<String> served = new ArrayList<>();
    if (!free.any()) {
      return served;
    }
    for (LinePlace place : targets.line()) {
      if (!free.any()) {
        break;
      }
      if (free.fits(place.groupName())) {
        free.take(place.groupName());
        served.add(place.name());
      }
    }
    return served;
  }
}
