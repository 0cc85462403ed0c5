/**
 * The planned-restart notice (GatewayRestarting, docs/robot-link.md "Planned gateway restarts"):
 * written to every online robot just before a planned stop ends the streams, so agents hold their
 * link-loss reaction while the gateway restarts instead of stopping their robots.
 */
import { create } from '@bufbuild/protobuf';
import { GatewayMessageSchema } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotSession } from './session.js';

/** The longest hold a gateway announces; agents cap it again by their own maximum (5 min by default). */
export const MAX_RESTART_HOLD_MS = 300_000;

/** What one announcement did: robots written to, and how many of those writes were flushed in time. */
export interface RestartNoticeResult {
  notified: number;
  flushed: number;
}

/**
 * Writes the notice to each session and resolves once every write has been handed to the
 * connection or `flushMs` has passed, whichever is first: the streams are ended right after, and a
 * notice still queued behind telemetry receipts would otherwise be cut off by the shutdown.
 */
export function announceRestart(sessions: Iterable<RobotSession>, holdMs: number, flushMs: number): Promise<RestartNoticeResult> {
  const msg = create(GatewayMessageSchema, { body: { case: 'restarting', value: { holdMs: Math.min(Math.max(0, Math.round(holdMs)), MAX_RESTART_HOLD_MS) } } });
  let notified = 0;
  let flushed = 0;
  const writes: Promise<void>[] = [];
  for (const s of sessions) {
    const written = new Promise<void>((resolve) => {
      if (s.write(msg, () => {
        flushed++;
        resolve();
      })) notified++;
      else resolve();
    });
    writes.push(written);
  }
  if (writes.length === 0) return Promise.resolve({ notified, flushed });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ notified, flushed }), flushMs);
    void Promise.all(writes).then(() => {
      clearTimeout(timer);
      resolve({ notified, flushed });
    });
  });
}
