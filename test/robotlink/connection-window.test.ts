/**
 * The robot link widens an authenticated robot connection's HTTP/2 connection window
 * (connection-window.ts), seen from a plain node:http2 client: no grpc-js internals in the test, so a
 * grpc-js upgrade that hides the session fails here instead of silently costing CPU.
 */
import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { CONNECT_PATH, PUBLISH_TELEMETRY_PATH, ROBOT_ID_METADATA } from '../../src/protocol/service.js';
import { ROBOT_CONNECTION_WINDOW_BYTES } from '../../src/robotlink/connection-window.js';
import { startHarness, type Harness } from './support.js';

const DEFAULT_WINDOW = 65_535;

describe('robot connection window', () => {
  let h: Harness | null = null;
  const clients: http2.ClientHttp2Session[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await h?.close();
    h = null;
  });

  const connect = async (): Promise<http2.ClientHttp2Session> => {
    const c = http2.connect(`http://${h!.server.address}`);
    clients.push(c);
    await new Promise<void>((resolve, reject) => c.once('remoteSettings', () => resolve()).once('error', reject));
    return c;
  };
  const call = (c: http2.ClientHttp2Session, path: string, headers: Record<string, string>): http2.ClientHttp2Stream =>
    c.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers }, { endStream: false });
  const waitFor = async (cond: () => boolean): Promise<void> => {
    const until = Date.now() + 5_000;
    while (!cond() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  };

  it('is widened once a robot authenticates, on a control or a telemetry stream, and only then', async () => {
    h = await startHarness();
    const { robotId, robotToken } = h.robot();
    const auth = { [ROBOT_ID_METADATA]: robotId, authorization: `Bearer ${robotToken}` };

    // Unauthenticated: refused, the window stays at the default.
    const anon = await connect();
    const refused = call(anon, CONNECT_PATH, { [ROBOT_ID_METADATA]: robotId, authorization: 'Bearer wrong' });
    const refusal = await new Promise<http2.IncomingHttpHeaders>((resolve) => refused.once('response', resolve));
    expect(refusal['grpc-status']).toBe('16'); // UNAUTHENTICATED
    // Time-based on purpose: a short look that no window update follows the refusal.
    await new Promise((r) => setTimeout(r, 100));
    expect(anon.state.remoteWindowSize).toBe(DEFAULT_WINDOW);

    const control = await connect();
    call(control, CONNECT_PATH, auth);
    await waitFor(() => control.state.remoteWindowSize! > DEFAULT_WINDOW);
    expect(control.state.remoteWindowSize).toBe(ROBOT_CONNECTION_WINDOW_BYTES);

    // A second authenticated stream on the same connection leaves it as it is.
    call(control, PUBLISH_TELEMETRY_PATH, auth);
    // Time-based on purpose: a short look that the second stream sends no further window update.
    await new Promise((r) => setTimeout(r, 100));
    expect(control.state.remoteWindowSize).toBe(ROBOT_CONNECTION_WINDOW_BYTES);

    // A connection that only carries telemetry is widened too, as soon as its stream authenticates.
    const telemetry = await connect();
    call(telemetry, PUBLISH_TELEMETRY_PATH, auth);
    await waitFor(() => telemetry.state.remoteWindowSize! > DEFAULT_WINDOW);
    expect(telemetry.state.remoteWindowSize).toBe(ROBOT_CONNECTION_WINDOW_BYTES);
    // Each stream keeps the default stream window: that is what bounds a paused robot's buffered telemetry.
    expect(telemetry.remoteSettings.initialWindowSize).toBe(DEFAULT_WINDOW);
  });
});
