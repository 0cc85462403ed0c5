/**
 * The VDA 5050 topic grammar as the broker's ACL sees it:
 * `{interfaceName}/{majorVersion}/{manufacturer}/{serialNumber}/{topic}`. A robot publishes its own
 * connection, state, visualization and factsheet topics (its last will is a connection message) and
 * subscribes to its own order and instantActions; master control does the reverse for every robot.
 */
import type { Vda5050Binding } from '../contracts.js';

/** What a robot publishes (VDA 5050 2.0: section 6). */
export const ROBOT_PUBLISHES = ['connection', 'state', 'visualization', 'factsheet'] as const;
/** What a robot subscribes to. */
export const ROBOT_SUBSCRIBES = ['order', 'instantActions'] as const;

/** `v2` for `2.0.0`. */
export function majorOf(version: string): string {
  return `v${version.split('.')[0]}`;
}

/** The topic prefix every message of this interface and version shares: `uagv/v2`. */
export function topicRoot(interfaceName: string, version: string): string {
  return `${interfaceName}/${majorOf(version)}`;
}

/** `uagv/v2/Acme/AGV-1/state`. */
export function robotTopic(root: string, binding: Vda5050Binding, topic: string): string {
  return `${root}/${binding.manufacturer}/${binding.serialNumber}/${topic}`;
}

/** The exact topics (no wildcard) a robot may publish and subscribe to. */
export interface RobotTopics {
  readonly publish: ReadonlySet<string>;
  readonly subscribe: ReadonlySet<string>;
}

/** The robot's allowed topics under `root`. */
export function robotTopics(root: string, binding: Vda5050Binding): RobotTopics {
  return {
    publish: new Set(ROBOT_PUBLISHES.map((t) => robotTopic(root, binding, t))),
    subscribe: new Set(ROBOT_SUBSCRIBES.map((t) => robotTopic(root, binding, t))),
  };
}

/** True when `filter` (a topic or a subscription filter) lies under `root/` (wildcards allowed past the root). */
export function underRoot(root: string, filter: string): boolean {
  return filter.startsWith(`${root}/`) && filter.length > root.length + 1;
}
