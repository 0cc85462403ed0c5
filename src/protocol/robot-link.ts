/**
 * What the rest of the gateway sees of the robot link (src/robotlink implements it over gRPC).
 * Commands and telemetry depend on this interface, not on grpc-js.
 */
import type { Command, CommandAck, CommandPolicy, CommandResult, FieldRuleSet, FieldRuleSetAck, HealthReport, MissionStatus, ObjectDetections } from '../gen/fleetgw/v1/robot_link_pb.js';

/**
 * A subscription to the link's events: a listener implements the hooks of the events it handles and
 * the link set calls those present (as an EventEmitter calls the handlers registered), so a hook left
 * out is an event not subscribed to, never a duty skipped. The link itself ({@link RobotLink}) has no
 * optional member.
 */
export interface RobotLinkListener {
  /**
   * A robot finished its Hello and is online; `capabilities` are the ones it advertised and
   * `lastAppliedSeq` the highest command seq its agent reports as applied (the gRPC link always sets it; 0n when none).
   * A newer connection replacing the current one is reported as another onOnline without an
   * onOffline in between, so handlers must be idempotent.
   */
  onOnline?(
    robotId: string,
    info: {
      fleetId: string;
      capabilities: string[];
      agentVersion: string;
      lastAppliedSeq?: bigint;
      /** The command policy from the Hello; undefined when the agent sent none (it then accepts only stop). */
      policy?: CommandPolicy;
      /** Mission runs the robot reports as active at connect time. */
      activeMissions?: MissionStatus[];
      /**
       * Commands this link cannot carry to the robot, each with the reason a caller is given (a
       * VDA 5050 robot has no reset, for one); the command service refuses them like a policy would.
       */
      unsupported?: Readonly<Record<string, string>>;
    },
  ): void;
  /**
   * A robot's Hello was accepted and its Welcome written, before any `onOnline` listener runs: what a
   * listener writes to the robot here (its fleet's field rules) reaches it ahead of every command,
   * including the outbox resend that `onOnline` starts. Must not block.
   */
  onLinkOpening?(robotId: string, fleetId: string): void;
  /** The robot's stream ended or its keepalive failed. */
  onOffline?(robotId: string, reason: string): void;
  /**
   * Raw, still-encoded TelemetryBatch bytes, as the robot sent them. Valid only during the call (they
   * may be a view into a buffer the robot link reuses for a later batch): copy what is kept.
   */
  onTelemetry?(robotId: string, fleetId: string, batch: Uint8Array): void;
  /**
   * onTelemetry bound to one robot: asked once per session when a robot's batches start arriving
   * (and again when the set of telemetry listeners changes, or after it threw); the returned function
   * then receives each of the robot's raw batches. For the per-message path: it saves the listener a
   * lookup by robot id per batch (10,000 a second at 1,000 robots). A listener with both gets its
   * batches here only. As with onTelemetry, each batch is valid only during the call. The function may
   * return whether the batch carries a `seq` (it read it): the link then does not read it again.
   */
  telemetrySink?(robotId: string, fleetId: string): (batch: Uint8Array) => boolean | void;
  onAck?(robotId: string, ack: CommandAck): void;
  /** The outcome of a request/response command (config, onboard settings). */
  onCommandResult?(robotId: string, result: CommandResult): void;
  /** The robot applied (or could not apply) a field rule set. */
  onFieldRuleAck?(robotId: string, ack: FieldRuleSetAck): void;
  /** A mission run's state change or progress report. */
  onMissionStatus?(robotId: string, status: MissionStatus): void;
  /** The robot's full health state (faults, per-device health): docs/faults.md. */
  onHealthReport?(robotId: string, report: HealthReport): void;
  /** One perception frame's object detections; `fleetId` is the fleet the session authenticated into. */
  onObjectDetections?(robotId: string, fleetId: string, detections: ObjectDetections): void;
  /**
   * A link conflict started: two live processes use this robot's credentials (docs/robot-link.md,
   * "Link conflicts"). The gateway records it in the event log (src/events/link-conflict.ts); this is
   * also the hook alerts subscribe to once they exist.
   */
  onLinkConflict?(robotId: string, report: LinkConflictReport): void;
  /** The robot's link conflict cleared (no connection refused for the clear time). */
  onLinkConflictCleared?(robotId: string, cleared: LinkConflictCleared): void;
}

/** A robot's current link conflict as the gateway publishes it (REST robot view, command delivery). */
export interface LinkConflictView {
  /** When the conflict was detected (gateway clock, Unix ms). */
  sinceMs: number;
  /** Connections refused since then because another process held the link. */
  refusedConnections: number;
  /** When the latest one was refused; the conflict clears once this is long enough ago. */
  lastRefusedAtMs: number;
}

/** One side of a conflict: the agent's instance id (null when it sends none) and its peer address. */
export interface LinkConnectionInfo {
  instanceId: string | null;
  peer: string;
}

/** What the listener learns when a conflict starts. */
export interface LinkConflictReport {
  fleetId: string;
  sinceMs: number;
  /**
   * When the takeover that began what this conflict proves happened: from then on, commands written
   * to the robot's stream may have reached either process (the command service flags them).
   */
  suspectSinceMs: number;
  /**
   * `displaced_returned`: a replaced process came back while another was live; `repeated_takeover`:
   * too many takeovers in the window; `instance_shared`: a connection replaced by another with the
   * same instance id came back (two processes sending one instance id).
   */
  rule: 'displaced_returned' | 'repeated_takeover' | 'instance_shared';
  /** The connection that keeps the link. */
  holder: LinkConnectionInfo;
  /** The connection refused. */
  refused: LinkConnectionInfo;
  /** The conflict clears after this long without a refused connection. */
  clearAfterMs: number;
}

/** What the listener learns when a conflict clears. */
export interface LinkConflictCleared {
  fleetId: string;
  sinceMs: number;
  clearedAtMs: number;
  refusedConnections: number;
}

export interface RobotLink {
  /** Registers a listener; returns a function that removes it. */
  listen(listener: RobotLinkListener): () => void;
  isOnline(robotId: string): boolean;
  /**
   * The robot's link conflict (two processes with its credentials), or null. The same object while
   * it is unchanged.
   */
  linkConflict(robotId: string): LinkConflictView | null;
  /**
   * Writes a command to the robot's stream. Returns false when the robot is not connected (nothing
   * was written). A true return means handed to the HTTP/2 stream, not that the robot received it.
   */
  send(robotId: string, command: Command): boolean;
  /**
   * Writes a field rule set to the robot's stream, in order with its commands. False when the robot
   * is not connected.
   */
  sendFieldRules(robotId: string, set: FieldRuleSet): boolean;
  /**
   * Ends the robot's current link session (the agent reconnects and authenticates again); false when
   * it has none. Used when the robot's fleet of record changed (docs/robot-admin.md).
   */
  closeSession(robotId: string, reason: string): boolean;
  /**
   * Pauses or resumes reading telemetry from every robot (telemetry backpressure). Control messages
   * (acks, command results, mission status) keep flowing, except from older agents that still send
   * telemetry on their control stream (see docs/robot-link.md).
   */
  setReadPaused(paused: boolean): void;
  /**
   * The robot's telemetry batches of `epoch` up to `seq` are durable (store or disk spool): a receipt
   * to the robot (acknowledged telemetry, docs/robot-link.md).
   */
  telemetryDurable(robotId: string, epoch: number, seq: number): void;
  /**
   * Where a robot's current durable point is read when its telemetry stream sends its first
   * sequenced batch (the robot then learns at once what the gateway already holds).
   */
  setTelemetryDurableSource(source: (robotId: string) => { epoch: number; seq: number } | undefined): void;
}
