/**
 * TEST DOUBLE base of the RobotLink interface (src/protocol/robot-link.ts): every method, each doing
 * nothing a test did not ask for (no robot online, nothing sent, no conflict). Test links extend it
 * and override what their test plays, so the interface stays complete with no optional methods.
 */
import type { Command, FieldRuleSet } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { LinkConflictView, RobotLink, RobotLinkListener } from '../../src/protocol/robot-link.js';

export class NoopRobotLink implements RobotLink {
  listen(_listener: RobotLinkListener): () => void {
    return () => {};
  }

  isOnline(_robotId: string): boolean {
    return false;
  }

  linkConflict(_robotId: string): LinkConflictView | null {
    return null;
  }

  send(_robotId: string, _command: Command): boolean {
    return false;
  }

  sendFieldRules(_robotId: string, _set: FieldRuleSet): boolean {
    return false;
  }

  closeSession(_robotId: string, _reason: string): boolean {
    return false;
  }

  setReadPaused(_paused: boolean): void {}

  telemetryDurable(_robotId: string, _epoch: number, _seq: number): void {}

  setTelemetryDurableSource(_source: (robotId: string) => { epoch: number; seq: number } | undefined): void {}
}
