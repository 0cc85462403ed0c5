/**
 * The link conflict rule on its own (src/robotlink/link-conflict.ts), with a fake clock; the real
 * process is exercised by test/e2e/link-conflict.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LinkConflictTracker, type ConnectionIdentity } from '../../src/robotlink/link-conflict.js';
import type { LinkConflictCleared } from '../../src/protocol/robot-link.js';

const R = 'robot-1';
const F = 'fleet-1';
const inst = (id: string, port = 1000): ConnectionIdentity => ({ key: `instance:${id}`, instanceId: id, peer: `10.0.0.1:${port}` });
const legacy = (port: number): ConnectionIdentity => ({ key: `peer:10.0.0.2:${port}`, instanceId: null, peer: `10.0.0.2:${port}` });

let cleared: { robotId: string; c: LinkConflictCleared }[];
let t: LinkConflictTracker;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  cleared = [];
  t = new LinkConflictTracker({ windowMs: 30_000, takeoverLimit: 3, clearAfterMs: 60_000, now: () => Date.now() }, (robotId, c) => cleared.push({ robotId, c }));
});

afterEach(() => {
  t.close();
  vi.useRealTimers();
});

describe('LinkConflictTracker', () => {
  it('admits a first connection and a reconnect of the same process, however often', () => {
    expect(t.admit(R, F, inst('a', 1), null)).toEqual({ admit: true });
    for (let port = 2; port < 20; port++) expect(t.admit(R, F, inst('a', port), inst('a', port - 1))).toEqual({ admit: true });
    expect(t.conflict(R)).toBeNull();
  });

  it('admits a takeover by another process (a restart before the old connection was noticed dead)', () => {
    expect(t.admit(R, F, inst('b'), inst('a'))).toEqual({ admit: true });
    // The old process never comes back; the new one reconnects as it likes.
    expect(t.admit(R, F, inst('b', 2), inst('b'))).toEqual({ admit: true });
    expect(t.conflict(R)).toBeNull();
  });

  it('starts a conflict when a displaced process comes back while another is live, and refuses it', () => {
    expect(t.admit(R, F, inst('b'), inst('a'))).toEqual({ admit: true });
    vi.advanceTimersByTime(250);
    const v = t.admit(R, F, inst('a', 7), inst('b'));
    expect(v).toMatchObject({
      admit: false,
      started: { fleetId: F, rule: 'displaced_returned', holder: { instanceId: 'b' }, refused: { instanceId: 'a', peer: '10.0.0.1:7' }, clearAfterMs: 60_000 },
    });
    expect(t.conflict(R)).toEqual({ sinceMs: Date.now(), refusedConnections: 1, lastRefusedAtMs: Date.now() });
  });

  it('while conflicted: refuses every other process, admits the holder\'s reconnect, and the next one when nobody holds the link', () => {
    t.admit(R, F, inst('b'), inst('a'));
    t.admit(R, F, inst('a'), inst('b'));
    const first = t.conflict(R);
    vi.advanceTimersByTime(1000);
    expect(t.admit(R, F, inst('a'), inst('b'))).toEqual({ admit: false, started: null });
    expect(t.admit(R, F, inst('c'), inst('b'))).toEqual({ admit: false, started: null });
    const now = t.conflict(R);
    expect(now).not.toBe(first); // a new object on change: caches compare by reference
    expect(now).toMatchObject({ refusedConnections: 3, lastRefusedAtMs: Date.now() });
    expect(t.conflict(R)).toBe(now);
    expect(t.admit(R, F, inst('b', 9), inst('b'))).toEqual({ admit: true });
    expect(t.admit(R, F, inst('a'), null)).toEqual({ admit: true });
    expect(t.conflict(R)).toMatchObject({ refusedConnections: 3 });
  });

  it('forgets a displaced process after the window', () => {
    t.admit(R, F, inst('b'), inst('a'));
    vi.advanceTimersByTime(30_000);
    expect(t.admit(R, F, inst('a'), inst('b'))).toEqual({ admit: true });
    expect(t.conflict(R)).toBeNull();
  });

  it('catches agents without an instance id that open a new connection each time: the third takeover in the window', () => {
    expect(t.admit(R, F, legacy(2), legacy(1))).toEqual({ admit: true });
    expect(t.admit(R, F, legacy(3), legacy(2))).toEqual({ admit: true });
    expect(t.admit(R, F, legacy(4), legacy(3))).toMatchObject({ admit: false, started: { rule: 'repeated_takeover', holder: { instanceId: null, peer: '10.0.0.2:3' } } });
  });

  it('clears after the quiet time without a refused connection, each refusal pushing it back, then starts afresh', () => {
    t.admit(R, F, inst('b'), inst('a'));
    t.admit(R, F, inst('a'), inst('b'));
    const since = Date.now();
    vi.advanceTimersByTime(50_000);
    t.admit(R, F, inst('a'), inst('b'));
    vi.advanceTimersByTime(59_000);
    expect(cleared).toEqual([]);
    expect(t.conflict(R)).not.toBeNull();
    vi.advanceTimersByTime(1000);
    expect(cleared).toEqual([{ robotId: R, c: { fleetId: F, sinceMs: since, clearedAtMs: Date.now(), refusedConnections: 2 } }]);
    expect(t.conflict(R)).toBeNull();
    // `a` was displaced before the conflict; that no longer counts.
    expect(t.admit(R, F, inst('a'), inst('b'))).toEqual({ admit: true });
  });

  it('keeps robots apart', () => {
    t.admit(R, F, inst('b'), inst('a'));
    t.admit(R, F, inst('a'), inst('b'));
    expect(t.admit('robot-2', F, inst('a'), inst('b'))).toEqual({ admit: true });
    expect(t.conflict('robot-2')).toBeNull();
  });

  it('flags two connections sharing one instance id when the replaced connection comes back; the holder\'s reconnects still pass', () => {
    expect(t.admit(R, F, inst('m', 2), inst('m', 1))).toEqual({ admit: true });
    vi.advanceTimersByTime(200);
    expect(t.admit(R, F, inst('m', 1), inst('m', 2))).toMatchObject({
      admit: false,
      started: { rule: 'instance_shared', suspectSinceMs: 1_000_000, holder: { peer: '10.0.0.1:2' }, refused: { peer: '10.0.0.1:1' } },
    });
    expect(t.admit(R, F, inst('m', 1), inst('m', 2))).toEqual({ admit: false, started: null });
    // The holder blips: a new connection with its id is admitted; the clone's connection still is not.
    expect(t.admit(R, F, inst('m', 3), inst('m', 2))).toEqual({ admit: true });
    expect(t.admit(R, F, inst('m', 1), inst('m', 3))).toEqual({ admit: false, started: null });
  });

  it('reports since when commands may have reached either process (the takeover that began the round)', () => {
    t.admit(R, F, inst('b'), inst('a'));
    vi.advanceTimersByTime(150);
    expect(t.admit(R, F, inst('a'), inst('b'))).toMatchObject({ started: { rule: 'displaced_returned', suspectSinceMs: 1_000_000, sinceMs: 1_000_150 } });
  });
});
