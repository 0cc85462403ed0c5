import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/catalog.js';
import { DEFAULT_BURST, DEFAULT_RATE_PER_SECOND, RateLimiter } from '../../src/http/rate-limit.js';
import { call, startFixture, type Fixture } from '../api/fixture.js';

describe('RateLimiter (token bucket)', () => {
  it('defaults to 100/s with a burst of 200', () => {
    const rl = new RateLimiter();
    expect([rl.ratePerSecond, rl.burst]).toEqual([DEFAULT_RATE_PER_SECOND, DEFAULT_BURST]);
    expect([DEFAULT_RATE_PER_SECOND, DEFAULT_BURST]).toEqual([100, 200]);
    for (let i = 0; i < 200; i++) expect(rl.take('k', 0).ok).toBe(true);
    expect(rl.take('k', 0)).toEqual({ ok: false, retryAfterS: 1 });
    // 10 ms at 100/s refills exactly one token.
    expect(rl.take('k', 10).ok).toBe(true);
    expect(rl.take('k', 10).ok).toBe(false);
  });

  it('Retry-After is whole seconds, at least 1, and long enough for a token to come back', () => {
    const rl = new RateLimiter({ ratePerSecond: 0.25, burst: 1 });
    expect(rl.take('k', 0).ok).toBe(true);
    expect(rl.take('k', 0)).toEqual({ ok: false, retryAfterS: 4 });
    expect(rl.take('k', 3999).ok).toBe(false);
    expect(rl.take('k', 4000).ok).toBe(true);
  });

  it('keys are independent', () => {
    const rl = new RateLimiter({ ratePerSecond: 1, burst: 2 });
    rl.take('a', 0);
    rl.take('a', 0);
    expect(rl.take('a', 0).ok).toBe(false);
    expect(rl.take('b', 0).ok).toBe(true);
  });

  it('tracks a bounded number of keys, evicting the least recently used', () => {
    const rl = new RateLimiter({ ratePerSecond: 1, burst: 1, maxKeys: 2 });
    rl.take('a', 0);
    rl.take('b', 0);
    rl.take('a', 0); // a is now the most recently used (and empty)
    rl.take('c', 0); // evicts b, not a
    expect(rl.size).toBe(2);
    expect(rl.take('a', 0).ok).toBe(false); // a kept its empty bucket
    expect(rl.take('b', 0).ok).toBe(true); // b starts over
  });

  it('consume throws the catalog 429 with a Retry-After header', () => {
    const rl = new RateLimiter({ ratePerSecond: 1, burst: 1 });
    rl.consume('k', 0);
    try {
      rl.consume('k', 0);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect([e.status, e.code, e.headers['retry-after']]).toEqual([429, 'rate_limited', '1']);
    }
  });

  it('rejects nonsense limits', () => {
    expect(() => new RateLimiter({ ratePerSecond: 0 })).toThrow();
    expect(() => new RateLimiter({ burst: -1 })).toThrow();
  });
});

describe('rate limiting over HTTP', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ rateLimit: { ratePerSecond: 0.5, burst: 5 } });
  });
  afterAll(async () => {
    await fx.close();
  });

  it('key A past its limit gets 429 rate_limited with Retry-After while key B still gets 200', async () => {
    const a = fx.keys.full;
    const b = fx.keys.fleetScopedA1;
    for (let i = 0; i < 5; i++) expect((await call(fx, 'GET', '/v1/me', { key: a })).status).toBe(200);
    const limited = await call(fx, 'GET', '/v1/me', { key: a });
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ code: 'rate_limited' });
    expect(Object.keys(limited.json as object).sort()).toEqual(['code', 'error']);
    const retry = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 2).toBe(true);
    expect((await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: a })).status).toBe(429);
    expect((await call(fx, 'GET', '/v1/me', { key: b })).status).toBe(200);
    // Unauthenticated requests are answered 401, never charged to a key.
    expect((await call(fx, 'GET', '/v1/me')).status).toBe(401);
    // The open document is not rate limited either.
    expect((await call(fx, 'GET', '/openapi.json')).status).toBe(200);
  });
});
