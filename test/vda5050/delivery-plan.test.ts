/**
 * The resend plan of master control (delivery.ts) and the outbound headerId seed (robot-entry.ts), as
 * pure functions: the link and e2e tests drive them through real robots.
 */
import { describe, expect, it } from 'vitest';
import { AwaitedIds, isRepeatable, resendPlan } from '../../src/vda5050/link/delivery.js';
import { HEADER_ID_EPOCH_MS, headerIdSeed, nextHeaderId, RobotEntry } from '../../src/vda5050/link/robot-entry.js';

describe('resendPlan', () => {
  const at = (states: number, epoch = 0) => ({ states, epoch });

  it('publishes a pick again only when the link epoch moved (a message may have been lost), else asks', () => {
    const ids = new AwaitedIds();
    expect(resendPlan(ids.get('a'), at(3), false, 'action', 'pick')).toBe('publish');
    ids.add('a', 'c-a', 'action', 'pick', 0, at(3));
    // States read since do not prove it lost: a robot may list an action only when it starts it.
    expect(resendPlan(ids.get('a'), at(3), false, 'action', 'pick')).toBe('ask');
    expect(resendPlan(ids.get('a'), at(9), false, 'action', 'pick')).toBe('ask');
    // A session ended, or a message to the robot was dropped: it may not have arrived.
    expect(resendPlan(ids.get('a'), at(9, 1), false, 'action', 'pick')).toBe('publish');
    ids.add('a', 'c-a', 'action', 'pick', 0, at(9, 1));
    expect(resendPlan(ids.get('a'), at(9, 1), false, 'action', 'pick')).toBe('ask');
  });

  it('publishes a repeatable command again after a state read since the last publication that does not show it', () => {
    const ids = new AwaitedIds();
    ids.add('s', 'c-s', 'action', 'startPause', 0, at(3));
    // The same count: a state read in the publication's turn is not after it.
    expect(resendPlan(ids.get('s'), at(3), false, 'action', 'startPause')).toBe('ask');
    expect(resendPlan(ids.get('s'), at(4), false, 'action', 'startPause')).toBe('publish');
    ids.add('o', 'c-o', 'order', '', 0, at(3));
    expect(resendPlan(ids.get('o'), at(4), false, 'order', '')).toBe('publish');
  });

  it('after a restart, repeats only the repeatable instant actions; withholds picks and orders', () => {
    expect(resendPlan(undefined, at(1), true, 'action', 'pick')).toBe('withhold');
    for (const t of ['startPause', 'stopPause', 'cancelOrder', 'stateRequest']) expect(resendPlan(undefined, at(1), true, 'action', t)).toBe('publish');
    // An order the robot may have driven and left: not driven again.
    expect(resendPlan(undefined, at(1), true, 'order', '')).toBe('withhold');
    const ids = new AwaitedIds();
    ids.add('p', 'c-p', 'action', 'pick', 0, at(1), true);
    // Withheld stays withheld, whatever comes.
    expect(resendPlan(ids.get('p'), at(9, 5), true, 'action', 'pick')).toBe('withhold');
    expect(isRepeatable('action', 'charge')).toBe(false);
  });

  it('a withheld command is still acknowledged by a state that shows it', () => {
    const ids = new AwaitedIds();
    ids.add('p', 'c-p', 'action', 'pick', 0, { states: 1, epoch: 0 }, true);
    const state = { actionStates: [{ actionId: 'p', actionType: 'pick', actionStatus: 'FINISHED' }], errors: [], orderId: '', paused: false } as never;
    expect(ids.settle(state, 1)).toEqual([{ commandId: 'c-p', actionType: 'pick', verdict: { received: true } }]);
  });
});

describe('outbound headerId', () => {
  it('is seeded from the clock, so a later start begins above an earlier run of fewer than 2 messages a second', () => {
    const t0 = Date.UTC(2026, 11, 7, 12);
    const first = headerIdSeed(t0);
    // A run of one hour that published 7000 messages on one topic (about 1.9 a second).
    let last = first;
    for (let i = 0; i < 7000; i++) last = nextHeaderId(last);
    expect(headerIdSeed(t0 + 3600_000 + 1000)).toBeGreaterThan(last);
    expect(new RobotEntry({ robotId: 'r', fleetId: 'f', binding: { manufacturer: 'm', serialNumber: 's' } }, t0).headerIds).toEqual({ order: first, instantActions: first });
  });

  it('stays a uint32 for decades and wraps like vda-5050-lib past 2^32 - 1', () => {
    expect(headerIdSeed(HEADER_ID_EPOCH_MS)).toBe(0);
    const in2090 = headerIdSeed(Date.UTC(2090, 0, 1));
    expect(in2090).toBeGreaterThan(headerIdSeed(Date.UTC(2080, 0, 1)));
    expect(in2090).toBeLessThan(2 ** 32);
    expect(nextHeaderId(2 ** 32 - 1)).toBe(0);
  });
});
