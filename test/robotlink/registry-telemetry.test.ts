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

  it('asks a sink factory that threw again at the next batch, and keeps sinks when a non-telemetry listener leaves', () => {
    const reg = new RobotRegistry(pino({ enabled: false }));
    const session = { robot: { robotId: 'r1', fleetId: 'f1' }, robotId: 'r1', telemetryRoute: null } as unknown as RobotSession;
    let asked = 0;
    const got: number[] = [];
    reg.listen({
      telemetrySink: () => {
        if (++asked === 1) throw new Error('not ready');
        return (b: Uint8Array) => void got.push(b.length);
      },
    });
    reg.telemetry(session, new Uint8Array(1));
    reg.telemetry(session, new Uint8Array(2));
    reg.telemetry(session, new Uint8Array(3));
    expect(got).toEqual([2, 3]);
    expect(asked).toBe(2);
    const off = reg.listen({ onOnline: () => {} });
    off();
    reg.telemetry(session, new Uint8Array(4));
    expect(asked).toBe(2);
    expect(got).toEqual([2, 3, 4]);
  });

  it('a pause decided while sessions are being resumed is not undone by the rest of that resume', () => {
    const reg = new RobotRegistry(pino({ enabled: false }));
    const state = new Map<string, boolean>();
    const current = (reg as unknown as { current: Map<string, unknown> }).current;
    for (const id of ['a', 'b', 'c']) {
      current.set(id, {
        setPaused: (p: boolean) => {
          state.set(id, p);
          // The first robot's backlog crosses the high-water mark again.
          if (id === 'a' && !p) reg.setReadPaused(true);
        },
      });
    }
    reg.setReadPaused(true);
    reg.setReadPaused(false);
    expect([...state.values()]).toEqual([true, true, true]);
  });
});
