/**
 * What each robot advertised in its latest Hello, as the Agent read tools describe it: its
 * capabilities, agent version and command policy (modes, actions with their argument schemas,
 * settings, go-to area, opt-ins). The command service keeps only the compiled form of a policy
 * (policy-registry.ts); this keeps the advertised one, to describe it.
 *
 * Held in memory from each Hello since the gateway started (a robot that has not connected since
 * then has none): the policy is the robot's to state, and a stale copy from an earlier process could
 * describe a policy the robot no longer has. Bounded by the number of registered robots: only they
 * can complete a Hello, and each has one entry, its newest Hello replacing the previous.
 */
import { SettingSpec_Kind, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLink } from '../protocol/robot-link.js';

/** One advertised action and the JSON Schema of its arguments (null: it takes no arguments). */
export interface AdvertisedAction {
  name: string;
  /** The advertised schema text, parsed when read; null when the robot sent none. */
  argumentsSchemaJson: string | null;
}

/** One advertised setting and its bounds. */
export interface AdvertisedSetting {
  key: string;
  kind: 'number' | 'boolean' | 'string' | 'unspecified';
  min: number | null;
  max: number | null;
  allowedValues: string[];
}

/** A robot's latest Hello, as advertised. */
export interface AdvertisedProfile {
  advertisedAtMs: number;
  agentVersion: string;
  capabilities: readonly string[];
  /** null: the robot advertised no command policy (it then accepts only stop). */
  policy: {
    modes: readonly string[];
    actions: readonly AdvertisedAction[];
    settings: readonly AdvertisedSetting[];
    goToArea: readonly { latitude: number; longitude: number }[] | null;
    remoteConfig: boolean;
    onboardSettings: boolean;
  } | null;
}

const KINDS: Record<number, AdvertisedSetting['kind']> = {
  [SettingSpec_Kind.NUMBER]: 'number',
  [SettingSpec_Kind.BOOLEAN]: 'boolean',
  [SettingSpec_Kind.STRING]: 'string',
};

function profileOf(p: CommandPolicy | undefined): AdvertisedProfile['policy'] {
  if (!p) return null;
  return {
    modes: [...p.allowedModes],
    actions: p.actions.map((a) => ({ name: a.name, argumentsSchemaJson: a.argumentsSchemaJson === '' ? null : a.argumentsSchemaJson })),
    settings: p.settings.map((s) => ({
      key: s.key,
      kind: KINDS[s.kind] ?? 'unspecified',
      min: s.hasRange ? s.min : null,
      max: s.hasRange ? s.max : null,
      allowedValues: [...s.allowedValues],
    })),
    goToArea: p.goToArea ? p.goToArea.ring.map((g) => ({ latitude: g.latitude, longitude: g.longitude })) : null,
    remoteConfig: p.remoteConfig,
    onboardSettings: p.onboardSettings,
  };
}

/** Every robot's latest advertised profile (see the module comment). */
export class AdvertisedProfiles {
  private readonly byRobot = new Map<string, AdvertisedProfile>();
  private readonly unlisten: () => void;

  constructor(link: Pick<RobotLink, 'listen'>, private readonly now: () => number = Date.now) {
    this.unlisten = link.listen({
      onOnline: (robotId, info) => {
        this.byRobot.set(robotId, {
          advertisedAtMs: this.now(),
          agentVersion: info.agentVersion,
          capabilities: [...info.capabilities],
          policy: profileOf(info.policy),
        });
      },
    });
  }

  /** The robot's latest Hello since start, or undefined when it has not connected since. */
  get(robotId: string): AdvertisedProfile | undefined {
    return this.byRobot.get(robotId);
  }

  close(): void {
    this.unlisten();
  }
}
