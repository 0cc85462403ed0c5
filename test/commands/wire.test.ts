// Every action's record -> protobuf Command mapping, and the audit digest (key-order independent).
import { describe, expect, it } from 'vitest';
import { argsDigest } from '../../src/commands/digest.js';
import type { ActionAndArgs, CommandRecord } from '../../src/commands/types.js';
import { toWire } from '../../src/commands/wire.js';
import { MissionControl_Action } from '../../src/gen/fleetgw/v1/robot_link_pb.js';

function rec(c: ActionAndArgs): CommandRecord {
  return {
    commandId: 'c', robotId: 'r', fleetId: 'f', orgId: 'o', ...c, argsDigest: '', seq: 7, requestedBy: { apiKeyId: 'k' },
    createdAtMs: 1000, state: 'deferred', rejectReason: null, history: [], attempts: 0, lastSentAtMs: null, retryBudgetExhausted: false, result: null,
  };
}

describe('toWire', () => {
  it('maps every action onto the Command oneof with the creation seq', () => {
    const cases: [ActionAndArgs, string, Record<string, unknown>][] = [
      [{ action: 'stop', args: { reason: 'x' } }, 'stop', { reason: 'x' }],
      [{ action: 'start', args: {} }, 'start', {}],
      [{ action: 'release', args: {} }, 'release', {}],
      [{ action: 'force_reset', args: {} }, 'forceReset', {}],
      [{ action: 'mode', args: { mode: 'manual' } }, 'setMode', { mode: 'manual' }],
      [{ action: 'invoke_action', args: { name: 'beep', arguments: { d: 1 } } }, 'invokeAction', { name: 'beep', argumentsJson: '{"d":1}' }],
      [{ action: 'update_settings', args: { values: { a: true } } }, 'updateSettings', { valuesJson: '{"a":true}' }],
      [{ action: 'go_to', args: { latitude: 1, longitude: 2, headingDeg: null, maxSpeedMps: 1.5 } }, 'goTo', { latitude: 1, longitude: 2, hasHeading: false, maxSpeedMps: 1.5 }],
      [{ action: 'go_to', args: { latitude: 1, longitude: 2, headingDeg: 0, maxSpeedMps: null } }, 'goTo', { hasHeading: true, headingDeg: 0, maxSpeedMps: 0 }],
      [{ action: 'config', args: { write: false, values: null } }, 'config', { write: false, valuesJson: '' }],
      [{ action: 'onboard_settings', args: { write: true, values: { v: 2 } } }, 'onboardSettings', { write: true, valuesJson: '{"v":2}' }],
      [
        { action: 'mission_start', args: { runId: 'run', missionId: 'm', name: 'n', steps: [{ kind: 'wait', config: { s: 1 } }], parameters: { p: 1 }, featureId: null } },
        'missionStart',
        { runId: 'run', missionId: 'm', name: 'n', parametersJson: '{"p":1}', featureId: '' },
      ],
      [{ action: 'mission_control', args: { runId: 'run', action: 'abort' } }, 'missionControl', { runId: 'run', action: MissionControl_Action.ABORT }],
    ];
    for (const [c, wireCase, fields] of cases) {
      const w = toWire(rec(c));
      expect(w.seq).toBe(7n);
      expect(w.commandId).toBe('c');
      expect(w.action.case, c.action).toBe(wireCase);
      expect(w.action.value).toMatchObject(fields);
    }
    const ms = toWire(rec(cases[11]![0]));
    expect(ms.action.case === 'missionStart' && ms.action.value.steps[0]?.configJson).toBe('{"s":1}');
  });

  it('digests arguments independently of key order, and differently for different values', () => {
    expect(argsDigest({ a: 1, b: { c: 2, d: [1, 2] } })).toBe(argsDigest({ b: { d: [1, 2], c: 2 }, a: 1 }));
    expect(argsDigest({ a: 1 })).not.toBe(argsDigest({ a: 2 }));
    expect(argsDigest({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });
});
