/**
 * A robot's capabilities as roster checks count them: the one set every read and the dispatcher use
 * (docs/agent-read.md, Capabilities), its registered list plus what its latest Hello advertised. The
 * advertised part is owned by the run tracker (src/missions/runs/run-tracker.ts), which is asked
 * through this interface.
 */

/** What each robot's latest Hello advertised: its capabilities and its command policy's action names. */
export interface AdvertisedCapabilities {
  /** Empty before the robot's first Hello since the gateway started. */
  advertisedCapabilities(robotId: string): readonly string[];
}

/** For a gateway without the mission runtime: no Hello is tracked, so only registrations count. */
export const NOTHING_ADVERTISED: AdvertisedCapabilities = { advertisedCapabilities: () => [] };

/** The first of `required` the robot has neither registered nor advertised, or undefined. */
export function missingCapability(advertised: AdvertisedCapabilities, robot: { robotId: string; capabilities: readonly string[] }, required: readonly string[]): string | undefined {
  if (required.length === 0) return undefined;
  const have = new Set([...robot.capabilities, ...advertised.advertisedCapabilities(robot.robotId)]);
  return required.find((c) => !have.has(c));
}
