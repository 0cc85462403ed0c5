import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import { CommandSchema, RobotMessageSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { CONNECT_PATH } from '../../src/protocol/service.js';
import { startHarness, startProxy, waitFor, type Harness } from './support.js';

let h: Harness;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  h = await startHarness({ helloTimeoutMs: 500 });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h.close();
});

function agent(cred: { robotId: string; robotToken: string }, extra: Partial<ConstructorParameters<typeof RobotAgent>[0]> = {}): RobotAgent {
  const a = new RobotAgent({
    address: h.server.address,
    ...cred,
    capabilities: ['stop', 'dock'],
    agentVersion: 'test-agent/1',
    onCommand: () => ({ accept: true }),
    reconnect: { initialMs: 50, maxMs: 200 },
    ...extra,
  });
  cleanups.push(() => a.stop());
  return a;
}

/** Opens a raw stream with the given metadata, writes `first`, and resolves with the final status. */
function rawCall(md: Metadata, first: Uint8Array | null, address = h.server.address): Promise<StatusObject> {
  const client = new Client(address, credentials.createInsecure());
  const id = (b: Buffer): Buffer => b;
  const call = client.makeBidiStreamRequest(CONNECT_PATH, (b: Uint8Array) => Buffer.from(b), id, md, {});
  call.on('data', () => {});
  call.on('error', () => {});
  if (first) call.write(first);
  return new Promise((resolve) => {
    call.on('status', (s: StatusObject) => {
      client.close();
      resolve(s);
    });
  });
}

const helloBytes = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'hello', value: { agentVersion: 'raw' } } }));

function metadata(robotId: string | null, auth: string | null): Metadata {
  const md = new Metadata();
  if (robotId !== null) md.set('x-robot-id', robotId);
  if (auth !== null) md.set('authorization', auth);
  return md;
}

describe('robot link authentication', () => {
  it('accepts a registered robot, sends Welcome and reports it online with its advertised capabilities', async () => {
    const cred = h.robot();
    let welcome: { robotId: string; fleetId: string } | null = null;
    const a = agent(cred, { onConnected: (w) => (welcome = { robotId: w.robotId, fleetId: w.fleetId }) });
    a.start();
    await waitFor(() => h.events.online.length === 1 && welcome !== null, 'online');
    expect(h.events.online[0]).toMatchObject({
      robotId: cred.robotId, fleetId: h.fleetId, capabilities: ['stop', 'dock'], agentVersion: 'test-agent/1', lastAppliedSeq: 0n,
    });
    expect(welcome).toEqual({ robotId: cred.robotId, fleetId: h.fleetId });
    expect(h.server.link.isOnline(cred.robotId)).toBe(true);
  });

  it('rejects a wrong token, an unknown robot and missing metadata alike with UNAUTHENTICATED', async () => {
    const cred = h.robot();
    const cases = [
      metadata(cred.robotId, `Bearer ${cred.robotToken}x`),
      metadata('00000000-0000-4000-8000-000000000000', `Bearer ${cred.robotToken}`),
      metadata(null, `Bearer ${cred.robotToken}`),
      metadata(cred.robotId, null),
      metadata(cred.robotId, cred.robotToken), // no Bearer scheme
      metadata('not-a-uuid', `Bearer ${cred.robotToken}`),
    ];
    for (const md of cases) {
      const st = await rawCall(md, helloBytes);
      expect(st.code).toBe(status.UNAUTHENTICATED);
      expect(st.details).toBe('invalid robot credentials');
    }
    expect(h.events.online).toHaveLength(0);
  });

  it('lets a robot registered after the server started connect at once (no credential cache)', async () => {
    const early = h.robot('early');
    const a = agent(early);
    a.start();
    await waitFor(() => h.events.online.length === 1, 'first robot online');
    const late = h.robot('late');
    agent(late).start();
    await waitFor(() => h.events.online.some((e) => e.robotId === late.robotId), 'late robot online');
  });

  it('ends a stream whose first message is not a Hello, and one that sends no Hello in time', async () => {
    const cred = h.robot();
    const ack = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'ack', value: { commandId: 'x' } } }));
    const st = await rawCall(metadata(cred.robotId, `Bearer ${cred.robotToken}`), ack);
    expect(st.code).toBe(status.INVALID_ARGUMENT);
    const slow = await rawCall(metadata(cred.robotId, `Bearer ${cred.robotToken}`), null);
    expect(slow.code).toBe(status.DEADLINE_EXCEEDED);
    expect(h.events.online).toHaveLength(0);
  });

  it('ends a stream that sends garbage', async () => {
    const cred = h.robot();
    const st = await rawCall(metadata(cred.robotId, `Bearer ${cred.robotToken}`), Uint8Array.from([0x12, 0x7f, 0x01]));
    expect(st.code).toBe(status.INTERNAL);
  });
});

describe('robot link online/offline tracking', () => {
  it('reports offline when the agent disconnects cleanly', async () => {
    const cred = h.robot();
    const a = agent(cred);
    a.start();
    await waitFor(() => h.events.online.length === 1, 'online');
    await a.stop();
    await waitFor(() => h.events.offline.length === 1, 'offline');
    expect(h.events.offline[0]?.robotId).toBe(cred.robotId);
    expect(h.server.link.isOnline(cred.robotId)).toBe(false);
    const cmd = create(CommandSchema, { commandId: 'c', seq: 1n, action: { case: 'stop', value: { reason: 'r' } } });
    expect(h.server.link.send(cred.robotId, cmd)).toBe(false);
  });

  it('reports offline within 5 s when the robot process is SIGKILLed', async () => {
    const cred = h.robot();
    const script = fileURLToPath(new URL('./fixtures/raw-robot.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, h.server.address, cred.robotId, cred.robotToken], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.includes('welcomed') && h.events.online.length === 1, 'child robot online');
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await waitFor(() => h.events.offline.length === 1, 'offline after SIGKILL', 5000);
    expect(h.events.offline[0]!.at - killedAt).toBeLessThan(5000);
  });

  it('reports offline within ~5 s when the TCP connection silently stops carrying data (keepalive)', async () => {
    const cred = h.robot();
    const proxy = await startProxy(h.server.address);
    cleanups.push(() => proxy.close());
    // The agent's own keepalive is slower than the gateway's, so the gateway must notice first.
    const a = agent(cred, { address: proxy.address, keepaliveTimeMs: 30_000, keepaliveTimeoutMs: 30_000, dedicatedConnection: true });
    a.start();
    await waitFor(() => h.events.online.length === 1, 'online');
    const holedAt = Date.now();
    proxy.blackhole(true);
    await waitFor(() => h.events.offline.length === 1, 'offline after black-holing', 6000);
    const took = h.events.offline[0]!.at - holedAt;
    expect(took).toBeLessThan(5500);
    expect(took).toBeGreaterThan(1000); // noticed by keepalive, not by a closed socket
  }, 15_000);

  it('lets a newer stream replace the current one without an offline event', async () => {
    const cred = h.robot();
    const ended: number[] = [];
    // The first agent waits long before reconnecting, so it does not take the robot back.
    const first = agent(cred, {
      reconnect: { initialMs: 60_000, maxMs: 60_000 },
      dedicatedConnection: true,
      onDisconnected: (r) => ended.push(r.code),
    });
    const second = agent(cred, { dedicatedConnection: true });
    first.start();
    await waitFor(() => h.events.online.length === 1, 'first online');
    second.start();
    await waitFor(() => h.events.online.length === 2, 'second online');
    await waitFor(() => ended.length === 1, 'first stream ended');
    expect(ended[0]).toBe(status.ABORTED);
    expect(h.events.offline).toHaveLength(0);
    expect(h.server.link.isOnline(cred.robotId)).toBe(true);
    await second.stop();
    await waitFor(() => h.events.offline.length === 1, 'offline once the current stream ends');
  });
});

describe('link conflicts (two processes with one robot\'s credentials)', () => {
  /** A raw legacy client (no instance id in its Hello) whose calls share one connection of its own. */
  function legacyClient(cred: { robotId: string; robotToken: string }): { open(hello?: Uint8Array): { ended: Promise<StatusObject>; welcomed: Promise<void> }; close(): void } {
    // grpc-js would otherwise share one connection between clients of a process with the same target.
    const client = new Client(h.server.address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    cleanups.push(() => client.close());
    return {
      open: (hello = helloBytes) => {
        const call = client.makeBidiStreamRequest(CONNECT_PATH, (b: Uint8Array) => Buffer.from(b), (b: Buffer) => b, metadata(cred.robotId, `Bearer ${cred.robotToken}`), {});
        call.on('error', () => {});
        const welcomed = new Promise<void>((resolve) => call.once('data', () => resolve()));
        const ended = new Promise<StatusObject>((resolve) => call.on('status', resolve));
        call.write(hello);
        return { ended, welcomed };
      },
      close: () => client.close(),
    };
  }

  it('refuses an agent without an instance id coming back on its connection while another holds the link', async () => {
    const cred = h.robot();
    const conflicts: unknown[] = [];
    h.server.link.listen({ onLinkConflict: (robotId, r) => conflicts.push({ robotId, ...r }) });
    const a = legacyClient(cred);
    const b = legacyClient(cred);
    const a1 = a.open();
    await a1.welcomed;
    const b1 = b.open();
    await b1.welcomed;
    expect((await a1.ended).code).toBe(status.ABORTED); // a takeover: admitted
    const a2 = a.open(); // the same process again, on the same connection (peer address)
    const st = await a2.ended;
    expect(st.code).toBe(status.ALREADY_EXISTS);
    expect(st.details).toMatch(/link conflict/);
    expect(conflicts).toEqual([expect.objectContaining({ robotId: cred.robotId, rule: 'displaced_returned', holder: expect.objectContaining({ instanceId: null }) })]);
    expect(h.server.link.linkConflict(cred.robotId)).toMatchObject({ refusedConnections: 1 });
    expect(h.server.link.isOnline(cred.robotId)).toBe(true);
    expect(h.events.offline).toHaveLength(0);
  });

  it('refuses an instance id that is not 1-64 printable ASCII characters', async () => {
    const cred = h.robot();
    const bad = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'hello', value: { agentVersion: 'raw', instanceId: 'x'.repeat(65) } } }));
    const st = await rawCall(metadata(cred.robotId, `Bearer ${cred.robotToken}`), bad);
    expect(st.code).toBe(status.INVALID_ARGUMENT);
    expect(st.details).toMatch(/instance_id/);
  });

  it('two agents with one token: the second process to come back is refused, the holder keeps its one stream', async () => {
    const cred = h.robot();
    const drops: { who: string; code: status }[] = [];
    let connects = 0;
    const mk = (who: string): RobotAgent => agent(cred, { dedicatedConnection: true, onConnected: () => connects++, onDisconnected: (r) => drops.push({ who, code: r.code }) });
    const a = mk('a');
    const b = mk('b');
    expect(a.instanceId).not.toBe(b.instanceId);
    a.start();
    await waitFor(() => connects === 1, 'a online');
    b.start();
    await waitFor(() => drops.some((d) => d.code === status.ALREADY_EXISTS), 'a refusal');
    const settled = connects;
    const dropsBefore = drops.filter((d) => d.code !== status.ALREADY_EXISTS).length;
    // Three more refusals of the second (it retries on its backoff) span the time a flap would need.
    const refusals = (): number => drops.filter((d) => d.code === status.ALREADY_EXISTS).length;
    const refusedBefore = refusals();
    await waitFor(() => refusals() >= refusedBefore + 3, 'three more refusals', 15_000);
    expect(connects).toBe(settled); // no more flapping
    expect(drops.filter((d) => d.code !== status.ALREADY_EXISTS)).toHaveLength(dropsBefore);
    expect(h.server.link.linkConflict(cred.robotId)?.refusedConnections).toBeGreaterThan(1);
  });
});
