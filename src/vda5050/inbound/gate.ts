/**
 * The inbound gate: every message a robot publishes to master control passes here before anything
 * else reads it. A message is refused when it is too large, not UTF-8 JSON, of another protocol
 * version, from another identity than its topic's, invalid under its topic's schema, or out of order
 * (`headerId`); a refused message is counted by reason, logged at most once per robot and window
 * (rejection-log.ts), and never returned. Nothing a robot sends makes the gate throw.
 *
 * Checks run cheapest first: the byte bound before any decoding (an oversized message is never
 * parsed), UTF-8 and JSON, then the header's `version` and identity (a string compare each, and a
 * clearer reason than the schema's for a robot of another version), then the schema, then the order.
 */
import type { Vda5050Robot } from '../contracts.js';
import { HeaderOrder } from './header-order.js';
import { REASON_INDEX, REJECT_REASONS, type RejectReason } from './reasons.js';
import { RejectionLog, REJECT_LOG_WINDOW_MS, type InboundLog } from './rejection-log.js';
import { firstProblem, inboundValidators, type InboundMessages, type InboundTopic } from './validators.js';

/** Default byte bound of one inbound message (a large factsheet or state fits many times over). */
export const DEFAULT_MAX_INBOUND_BYTES = 256 * 1024;
/** Default number of robots whose headerIds are remembered (header-order.ts). */
export const DEFAULT_MAX_ORDERED_ROBOTS = 65_536;

/** A message that passed the gate, typed by its topic. */
export type ValidatedMessage = { [T in InboundTopic]: { readonly topic: T; readonly message: InboundMessages[T] } }[InboundTopic];

export interface InboundGateOptions {
  /** The protocol version robots speak (`2.0.0`); messages must carry its major and minor version. */
  version: string;
  /** Largest message accepted, in bytes; default {@link DEFAULT_MAX_INBOUND_BYTES}. */
  maxBytes?: number;
  /** Where refusals are logged (once per robot and window). */
  log: InboundLog;
  /** Length of a robot's log window in ms; default 60 s. */
  logWindowMs?: number;
  /** Robots whose headerIds are remembered; default {@link DEFAULT_MAX_ORDERED_ROBOTS}. */
  maxOrderedRobots?: number;
  /** Clock for the log windows (tests). */
  now?: () => number;
}

/** Running totals since the gate was made (read by the metrics at scrape time). */
export interface InboundGateStats {
  accepted: number;
  /** Refused messages by reason, in {@link REJECT_REASONS} order. */
  rejected: readonly number[];
  /** Sessions whose headerIds started again after a `connection` ONLINE (header-order.ts). */
  headerResets: number;
}

export interface InboundGate {
  /**
   * Checks one message `robot` published on its topic `{interface}/{major}/{manufacturer}/{serialNumber}/{topic}`:
   * returns it parsed and typed, or undefined when it is refused (counted and logged here; the caller
   * drops it). `robot` is the robot bound to the topic's manufacturer and serial number. Never throws.
   */
  accept(robot: Vda5050Robot, topic: string, payload: Uint8Array): ValidatedMessage | undefined;
  /** Forgets a robot's headerIds and log window (call when its binding is removed or changed). */
  forget(robotId: string): void;
  /**
   * The robot's MQTT session ended (the broker says so): its next message on each topic starts a new
   * session whatever its headerId, as after a `connection` ONLINE (a robot that restarts without
   * publishing one). Its log window stays.
   */
  sessionEnded(robotId: string): void;
  stats(): InboundGateStats;
}

const TOPICS: ReadonlySet<string> = new Set<InboundTopic>(['connection', 'state', 'visualization', 'factsheet']);

/**
 * Makes a gate. Compiles the schemas on the first call in the process (inboundValidators).
 * @throws Error when `version` is not `[major].[minor].[patch]` of major version 2 (the schemas here
 *   are VDA 5050 2.0's; a 2.x robot's additions pass them, the objects being open), or `maxBytes` is not a positive integer
 */
export function createInboundGate(opts: InboundGateOptions): InboundGate {
  const m = /^(\d+)\.(\d+)\.\d+$/.exec(opts.version);
  if (m === null || m[1] !== '2') throw new Error(`VDA 5050 version must be 2.x.y (e.g. 2.0.0), got '${opts.version}'`);
  const majorMinor = `${m[1]}.${m[2]}`;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_INBOUND_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new Error(`VDA 5050 maxBytes must be a positive integer, got ${String(opts.maxBytes)}`);
  const validators = inboundValidators();
  const order = new HeaderOrder(opts.maxOrderedRobots ?? DEFAULT_MAX_ORDERED_ROBOTS);
  const log = new RejectionLog(opts.log, opts.logWindowMs ?? REJECT_LOG_WINDOW_MS, opts.now ?? Date.now);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const rejected = new Array<number>(REJECT_REASONS.length).fill(0);
  let accepted = 0;
  let headerResets = 0;

  const refuse = (robotId: string, topic: string, reason: RejectReason, problem: string): undefined => {
    rejected[REASON_INDEX[reason]]!++;
    log.refused(robotId, topic, reason, problem);
    return undefined;
  };

  const check = (robot: Vda5050Robot, topic: string, payload: Uint8Array): ValidatedMessage | undefined => {
    const id = robot.robotId;
    if (payload.byteLength > maxBytes) return refuse(id, topic, 'too_large', `${payload.byteLength} bytes, over the bound of ${maxBytes}`);
    if (!TOPICS.has(topic)) return refuse(id, topic.slice(0, 64), 'unknown_topic', 'not a topic robots publish to master control');
    let body: unknown;
    try {
      body = JSON.parse(utf8.decode(payload));
    } catch (err) {
      return refuse(id, topic, 'not_json', err instanceof TypeError ? 'not UTF-8' : 'not JSON');
    }
    if (typeof body === 'object' && body !== null) {
      const h = body as { version?: unknown; manufacturer?: unknown; serialNumber?: unknown };
      if (typeof h.version === 'string' && h.version !== majorMinor && !h.version.startsWith(`${majorMinor}.`)) {
        return refuse(id, topic, 'wrong_version', `version is not ${majorMinor}.x`);
      }
      if ((typeof h.manufacturer === 'string' && h.manufacturer !== robot.binding.manufacturer)
        || (typeof h.serialNumber === 'string' && h.serialNumber !== robot.binding.serialNumber)) {
        return refuse(id, topic, 'wrong_identity', 'manufacturer or serialNumber differs from the topic\'s');
      }
    }
    const t = topic as InboundTopic;
    const validate = validators[t];
    if (!validate(body)) return refuse(id, topic, 'schema', firstProblem(validate.errors));
    const message = { topic: t, message: body } as ValidatedMessage;
    if (message.topic === 'connection') {
      if (message.message.connectionState === 'ONLINE') order.sessionStarted(id);
    } else {
      const verdict = order.check(id, message.topic, message.message.headerId);
      if (verdict === 'out_of_order') return refuse(id, topic, 'out_of_order', 'headerId is not above the last one accepted');
      if (verdict === 'reset') headerResets++;
    }
    accepted++;
    return message;
  };

  return {
    accept(robot, topic, payload) {
      try {
        return check(robot, topic, payload);
      } catch (err) {
        // A bug in the gate: the message is dropped, the caller carries on.
        return refuse(robot.robotId, String(topic).slice(0, 64), 'gate_error', err instanceof Error ? err.message.slice(0, 200) : 'unknown error');
      }
    },
    forget(robotId) {
      order.forget(robotId);
      log.forget(robotId);
    },
    sessionEnded(robotId) {
      order.sessionStarted(robotId);
    },
    stats: () => ({ accepted, rejected: [...rejected], headerResets }),
  };
}
