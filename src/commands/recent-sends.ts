/**
 * The commands written to each robot's stream recently, so that a link conflict detected now can
 * flag what was sent since the takeover that began it (the first round of a conflict: before
 * detection, the gateway cannot know that the machine holding the link is one of two).
 *
 * Bounds: per robot, sends within the last `windowMs` and at most `maxPerRobot` (oldest dropped; a
 * robot sent more than that within the window has its oldest sends go unflagged, see
 * docs/robot-link.md); one entry per robot that was sent something (robots are registered and
 * authenticated, so the map is bounded by them); a robot's list is pruned on each send to it.
 */
export class RecentSends {
  private readonly byRobot = new Map<string, { commandId: string; atMs: number }[]>();

  constructor(
    private readonly windowMs: number,
    private readonly maxPerRobot: number,
  ) {}

  /** Records that `commandId` was written to the robot's stream at `atMs`. */
  note(robotId: string, commandId: string, atMs: number): void {
    let list = this.byRobot.get(robotId);
    if (!list) this.byRobot.set(robotId, (list = []));
    while (list.length > 0 && (atMs - (list[0] as { atMs: number }).atMs >= this.windowMs || list.length >= this.maxPerRobot)) list.shift();
    list.push({ commandId, atMs });
  }

  /** Distinct command ids written to the robot's stream at or after `sinceMs`. */
  since(robotId: string, sinceMs: number): string[] {
    const ids = new Set<string>();
    for (const s of this.byRobot.get(robotId) ?? []) if (s.atMs >= sinceMs) ids.add(s.commandId);
    return [...ids];
  }
}
