// The failed-authentication throttle's bookkeeping (issue 8 item 8): the unit an address counts as,
// refill, and the bound on tracked addresses. The behaviour on the wire: test/e2e/auth-throttle.test.ts.
import { describe, expect, it } from 'vitest';
import { AuthThrottle, clientKey } from '../../src/http/auth-throttle.js';

describe('clientKey', () => {
  it('IPv4 as is, IPv4 mapped into IPv6 as IPv4, IPv6 by its /64', () => {
    expect(clientKey('10.1.2.3')).toBe('10.1.2.3');
    expect(clientKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientKey('0000:0000:0000:0000:0000:ffff:0a01:0203')).toBe('0:0:0:0::/64');
    expect(clientKey('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });
});

describe('AuthThrottle', () => {
  it('allows `burst` failures, then refills at the set rate', () => {
    const t = new AuthThrottle({ burst: 3, refillPerSecond: 2 });
    for (let i = 0; i < 3; i++) {
      expect(t.blockedFor('10.0.0.1', 0)).toBeNull();
      t.failed('10.0.0.1', 0);
    }
    expect(t.blockedFor('10.0.0.1', 0)).toBe(1);
    expect(t.blockedFor('10.0.0.2', 0)).toBeNull();
    expect(t.blockedFor('10.0.0.1', 499)).toBe(1);
    expect(t.blockedFor('10.0.0.1', 500)).toBeNull();
  });

  it('tracks at most maxAddresses, dropping the least recently failed', () => {
    const t = new AuthThrottle({ burst: 1, maxAddresses: 3 });
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) t.failed(a, 0);
    t.failed('10.0.0.1', 1); // most recent again
    t.failed('10.0.0.4', 2); // evicts 10.0.0.2
    expect(t.size).toBe(3);
    expect(t.blockedFor('10.0.0.2', 2)).toBeNull();
    expect(t.blockedFor('10.0.0.1', 2)).not.toBeNull();
    expect(t.blockedFor('10.0.0.3', 2)).not.toBeNull();
  });
});
