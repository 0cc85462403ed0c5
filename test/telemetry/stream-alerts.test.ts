/** Alert messages on the live stream hub (no sockets): only to `fleet:read` tickets, the robot filter applied. */
import { describe, expect, it } from 'vitest';
import { StreamHub, type StreamPeer } from '../../src/telemetry/live/stream-hub.js';
import { TicketIssuer } from '../../src/telemetry/live/ticket-issuer.js';

function peer(): StreamPeer & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    send: (m) => void sent.push(typeof m === 'string' ? m : Buffer.from(m).toString()),
    bufferedAmount: () => 0,
    cork: (fn) => fn(),
    end: () => {},
  };
}

const enc = (o: unknown): ArrayBuffer => new TextEncoder().encode(JSON.stringify(o)).buffer;

describe('StreamHub.publishAlert', () => {
  it('reaches sockets of the fleet whose ticket may read alerts, within their robot filter', () => {
    const tickets = new TicketIssuer();
    const hub = new StreamHub({ tickets });
    const open = (alerts: boolean, robotIds: string[] | null, fleetId = 'f1'): ReturnType<typeof peer> => {
      const p = peer();
      const s = hub.connect(p, null, false);
      const t = tickets.issue({ orgId: 'o', fleetId, apiKeyId: 'k', alerts });
      s.onMessage(enc({ op: 'subscribe', ticket: t.ticket, robot_ids: robotIds }));
      p.sent.length = 0;
      return p;
    };
    const reader = open(true, null);
    const samplesOnly = open(false, null);
    const filtered = open(true, ['r1']);
    const otherFleet = open(true, null, 'f2');
    hub.publishAlert('f1', 'r1', '{"op":"alert","n":1}');
    hub.publishAlert('f1', 'r2', '{"op":"alert","n":2}');
    hub.publishAlert('f1', null, '{"op":"alert","n":3}');
    expect(reader.sent).toEqual(['{"op":"alert","n":1}', '{"op":"alert","n":2}', '{"op":"alert","n":3}']);
    expect(samplesOnly.sent).toEqual([]);
    expect(filtered.sent).toEqual(['{"op":"alert","n":1}', '{"op":"alert","n":3}']);
    expect(otherFleet.sent).toEqual([]);
    hub.close();
  });
});
