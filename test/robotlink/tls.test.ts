import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import { startHarness, waitFor, type Harness } from './support.js';

async function selfSigned(): Promise<{ cert: Buffer; key: Buffer }> {
  const pems = await generate([{ name: 'commonName', value: 'fleet-gateway-test' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private) };
}

let h: Harness | null = null;
const agents: RobotAgent[] = [];

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await h?.close();
  h = null;
});

describe('robot link over TLS', () => {
  it('connects an agent that trusts the gateway certificate, and not one that does not', async () => {
    const tls = await selfSigned();
    const other = await selfSigned();
    h = await startHarness({ tls });
    const cred = h.robot();
    const failures = new Map<RobotAgent, number>();
    const mk = (tlsRootCert: Buffer | null): RobotAgent => {
      const a: RobotAgent = new RobotAgent({
        address: h!.server.address, ...cred, tlsRootCert, onCommand: () => ({ accept: true }), dedicatedConnection: true,
        onDisconnected: () => failures.set(a, (failures.get(a) ?? 0) + 1),
      });
      agents.push(a);
      return a;
    };
    const plaintext = mk(null);
    const wrongCa = mk(other.cert);
    plaintext.start();
    wrongCa.start();
    // Each has failed twice (a first attempt and a retry): neither got through.
    await waitFor(() => [plaintext, wrongCa].every((a) => (failures.get(a) ?? 0) >= 2), 'two failed attempts of each', 15_000);
    expect(h.events.online).toHaveLength(0);
    const good = mk(tls.cert);
    good.start();
    await waitFor(() => good.connected && h!.events.online.length === 1, 'TLS agent online');
  });
});
