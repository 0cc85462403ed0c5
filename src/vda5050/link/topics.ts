/**
 * VDA 5050 topic names: `{interfaceName}/{majorVersion}/{manufacturer}/{serialNumber}/{topic}`.
 */
import type { Vda5050Binding } from '../contracts.js';

/** Topics a robot publishes (master control subscribes to these). */
export const INBOUND_TOPICS = ['connection', 'state', 'visualization', 'factsheet'] as const;
export type InboundTopic = (typeof INBOUND_TOPICS)[number];

/** Topics master control publishes. */
export type OutboundTopic = 'order' | 'instantActions';

/** The topic prefix of a protocol version: `uagv/v2`. */
export function topicPrefix(interfaceName: string, version: string): string {
  return `${interfaceName}/v${version.split('.')[0] ?? '2'}`;
}

/** The subscription filters master control needs: every robot's inbound topics. */
export function inboundFilters(prefix: string): string[] {
  return INBOUND_TOPICS.map((t) => `${prefix}/+/+/${t}`);
}

/** A robot's topic. */
export function robotTopic(prefix: string, binding: Vda5050Binding, topic: OutboundTopic | InboundTopic): string {
  return `${prefix}/${binding.manufacturer}/${binding.serialNumber}/${topic}`;
}

/** The identity and topic of an inbound topic name; null when it is not one of ours. */
export function parseInboundTopic(prefix: string, topic: string): { manufacturer: string; serialNumber: string; topic: InboundTopic } | null {
  if (!topic.startsWith(prefix) || topic.charCodeAt(prefix.length) !== 47 /* / */) return null;
  const rest = topic.slice(prefix.length + 1).split('/');
  if (rest.length !== 3) return null;
  const [manufacturer, serialNumber, name] = rest as [string, string, string];
  if (manufacturer === '' || serialNumber === '' || !(INBOUND_TOPICS as readonly string[]).includes(name)) return null;
  return { manufacturer, serialNumber, topic: name as InboundTopic };
}
