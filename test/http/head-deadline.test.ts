// Issue 8 item 6: routes added next to the REST catch-all report their requests to the head deadline
// (src/http/head-deadline.ts), so it never writes to a socket a request took over. The deadline itself
// is tested through `fleetgw serve` in test/e2e/http-framing.test.ts.
import * as uws from '../../src/http/uws.js';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { HeadDeadline, reportingRoutes } from '../../src/http/head-deadline.js';

describe('reportingRoutes', () => {
  it('refuses a WebSocket route without its own upgrade handler, and keeps chaining on the guarded app', () => {
    const app = uws.App();
    try {
      const guarded = reportingRoutes(app, new HeadDeadline(pino({ enabled: false })));
      expect(() => guarded.ws('/a', {})).toThrow(/needs an upgrade handler/);
      expect(guarded.get('/b', (res) => void res.end()).any('/c', (res) => void res.end())).toBe(guarded);
      expect(guarded.ws('/d', { upgrade: () => {} })).toBe(guarded);
    } finally {
      app.close();
    }
  });
});
