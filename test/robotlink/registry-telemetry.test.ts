/**
 * Telemetry fan-out of the robot registry: only telemetry listeners, each once, a throwing one starves
 * nobody, unsubscribe works; a telemetrySink is asked once per robot and again only when the robot's
 * fleet or the listeners change.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RobotRegistry } from '../../src/robotlink/registry.js';
import type { RobotSession } from '../../src/robotlink/session.js';

describe('robot registry telemetry listeners', () => {
  it('delivers to each telemetry listener once, past a throwing one, and stops after unsubscribe', () => {
    const reg = new RobotRegistry(pino({ enabled: false }));
    const session = { robot: { robotId: 'r1', fleetId: 'f1' }, robotId: 'r1', telemetryRoute: null } as unknown as RobotSession;
    const got: string[] = [];
    const a = { onTelemetry: (robotId: string, fleetId: string, b: Uint8Array) => void got.push(`a:${robotId}:${fleetId}:${b.length}`) };
    reg.listen({ onOnline: () => {} });
    const offA = reg.listen(a);
    reg.listen(a); // the same listener twice is one listener
    reg.listen({ onTelemetry: () => { throw new Error('boom'); } });
    const offB = reg.listen({ onTelemetry: () => void got.push('b') });
    reg.telemetry(session, new Uint8Array(3));
    expect(got).toEqual(['a:r1:f1:3', 'b']);
    offA();
    reg.telemetry(session, new Uint8Array(1));
    expect(got).toEqual(['a:r1:f1:3', 'b', 'b']);
    offB();
    reg.telemetry(session, new Uint8Array(1));
    expect(got).toHaveLength(3);
  });

  it('asks a telemetrySink once per robot, again when its fleet or the listeners change, and prefers it to onTelemetry', () => {
    const reg = new RobotRegistry(pino({ enabled: false }));
    const robot = { robotId: 'r1', fleetId: 'f1' };
    const session = { robot, robotId: 'r1', telemetryRoute: null } as unknown as RobotSession;
    const asked: string[] = [];
    const got: string[] = [];
    reg.listen({
      telemetrySink: (robotId: string, fleetId: string) => {
        asked.push(`${robotId}:${fleetId}`);
        return (b: Uint8Array) => void got.push(`${fleetId}:${b.length}`);
      },
      onTelemetry: () => void got.push('onTelemetry'),
    });
    reg.telemetry(session, new Uint8Array(1));
    reg.telemetry(session, new Uint8Array(2));
    expect(asked).toEqual(['r1:f1']);
    expect(got).toEqual(['f1:1', 'f1:2']);
    robot.fleetId = 'f2';
    reg.telemetry(session, new Uint8Array(3));
    expect(asked).toEqual(['r1:f1', 'r1:f2']);
    const off = reg.listen({ onTelemetry: (_r: string, f: string) => void got.push(`plain:${f}`) });
    reg.telemetry(session, new Uint8Array(4));
    expect(asked).toEqual(['r1:f1', 'r1:f2', 'r1:f2']);
    off();
    reg.telemetry(session, new Uint8Array(5));
    expect(got).toEqual(['f1:1', 'f1:2', 'f2:3', 'f2:4', 'plain:f2', 'f2:5']);
  });
});
