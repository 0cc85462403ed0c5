/** The agent's health reporter: nothing before the first state, full state on connect, on change and periodically. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HealthReporter } from '../../src/agent/health-reporter.js';
import { HealthSeverity } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { HealthReport } from '../../src/gen/fleetgw/v1/robot_link_pb.js';

const fault = { code: 'battery_low', severity: HealthSeverity.WARNING, component: 'battery', message: '18 %' };

describe('HealthReporter', () => {
  afterEach(() => vi.useRealTimers());

  it('sends nothing before the first state, then on connect, on change and every period', () => {
    vi.useFakeTimers();
    const sent: HealthReport[] = [];
    const r = new HealthReporter((rep) => (sent.push(rep), true), 1000);
    r.onConnected();
    expect(sent).toHaveLength(0);
    r.set({ faults: [fault], devices: [] });
    expect(sent.map((s) => s.faults.map((f) => f.code))).toEqual([['battery_low']]);
    // Same state (readings aside): nothing new until the period.
    r.set({ faults: [fault], devices: [] });
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(sent).toHaveLength(2);
    r.set({ faults: [], devices: [] });
    expect(sent[2]!.faults).toEqual([]);
    r.onDisconnected();
    vi.advanceTimersByTime(5000);
    expect(sent).toHaveLength(3);
    r.onConnected();
    expect(sent).toHaveLength(4);
    r.stop();
  });
});
