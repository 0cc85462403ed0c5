/** The simulator's health model: a drive overload raises an overtemp fault that clears by itself; low battery; every device kind. */
import { describe, expect, it } from 'vitest';
import { DeviceKind, HealthSeverity } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { SimHealth } from '../../src/sim/health.js';

const inputs = { speedMps: 1.5, batteryPct: 70, charging: false, cpuTempC: 50 };

describe('SimHealth', () => {
  it('raises drive_left_overtemp during an overload and clears it after cooling', () => {
    const h = new SimHealth('robot-1');
    const codes = (): string[] => h.state(0).faults.map((f) => f.code!);
    h.overloadDrive('drive_left', 30);
    let raisedAt = -1;
    for (let s = 0; s < 30; s++) {
      h.step(1, inputs);
      if (raisedAt < 0 && codes().includes('drive_left_overtemp')) raisedAt = s;
    }
    expect(raisedAt).toBeGreaterThan(0);
    const fault = h.state(0).faults.find((f) => f.code === 'drive_left_overtemp')!;
    expect(fault).toMatchObject({ severity: HealthSeverity.ERROR, component: 'drive_left' });
    const drive = h.state(0).devices.find((d) => d.deviceId === 'drive_left')!;
    expect(drive.status).toBe('overtemp');
    for (let s = 0; s < 60; s++) h.step(1, inputs);
    expect(codes()).not.toContain('drive_left_overtemp');
  });

  it('reports battery_low under 20 % until charged past 30 %, and every device kind', () => {
    const h = new SimHealth('robot-2');
    h.step(1, { ...inputs, batteryPct: 15 });
    expect(h.state(0).faults.map((f) => f.code)).toContain('battery_low');
    h.step(1, { ...inputs, batteryPct: 25, charging: true });
    expect(h.state(0).faults.map((f) => f.code)).toContain('battery_low');
    h.step(1, { ...inputs, batteryPct: 31, charging: true });
    expect(h.state(0).faults.map((f) => f.code)).not.toContain('battery_low');
    const kinds = new Set(h.state(0).devices.map((d) => d.kind));
    expect([...kinds].sort()).toEqual([DeviceKind.BATTERY, DeviceKind.DRIVE, DeviceKind.SENSOR, DeviceKind.COMPUTER].sort());
  });
});
