/** Telemetry fan-out of the robot registry: only telemetry listeners, each once, a throwing one starves nobody, unsubscribe works. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RobotRegistry } from '../../src/robotlink/registry.js';
import type { RobotSession } from '../../src/robotlink/session.js';

describe('robot registry telemetry listeners', () => {
  it('delivers to each telemetry listener once, past a throwing one, and stops after unsubscribe', () => {
    const reg = new RobotRegistry(pino({ enabled: false }));
    const session = { robot: { robotId: 'r1', fleetId: 'f1' } } as unknown as RobotSession;
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
});
