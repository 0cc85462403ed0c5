/**
 * Test helpers for the live telemetry WebSocket against a running gateway: a ticket over REST, then a
 * real `ws` client that records every message and how (and when) the socket closed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { FLEETGW_BIN } from './cli.js';
import { api } from './gateway.js';

export type StreamMsg = Record<string, unknown> & { op: string };

export interface StreamClient {
  ws: WebSocket;
  messages: StreamMsg[];
  /** Set once the socket closed: code, reason text and Date.now() at the close event. */
  closed: { code: number; reason: string; atMs: number } | null;
  opened: Promise<void>;
  of(op: string): StreamMsg[];
  send(msg: unknown): void;
}

/** POST /v1/telemetry/stream-tickets with `apiKey`; returns status, body and headers. */
export async function requestTicket(http: string, apiKey: string, orgId: string, fleetId: string): Promise<{ status: number; body: any; headers: Headers }> {
  return api(http, apiKey, '/v1/telemetry/stream-tickets', { method: 'POST', body: JSON.stringify({ org_id: orgId, fleet_id: fleetId }) });
}

/** Opens the stream socket (optionally with WebSocket subprotocols) and records what happens. */
export function openStream(url: string, protocols: string[] = []): StreamClient {
  const ws = new WebSocket(url, protocols);
  const c: StreamClient = {
    ws,
    messages: [],
    closed: null,
    opened: new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    of: (op) => c.messages.filter((m) => m.op === op),
    send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
  };
  ws.on('message', (d: Buffer) => c.messages.push(JSON.parse(d.toString('utf8')) as StreamMsg));
  ws.on('close', (code: number, reason: Buffer) => {
    c.closed = { code, reason: reason.toString('utf8'), atMs: Date.now() };
  });
  ws.on('error', () => {});
  return c;
}

/** Starts `fleetgw sim` for the given robots at `hz` samples per second; resolves once it runs. */
export async function startSim(dir: string, grpc: string, robots: { robotId: string; robotToken: string }[], hz = 20): Promise<ChildProcess> {
  const file = join(dir, 'sim-robots.json');
  writeFileSync(file, JSON.stringify(robots), { mode: 0o600 });
  const sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', grpc, '--robots-file', file, '--hz', String(hz)], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: sim.stdout }).once('line', () => resolve());
    sim.once('exit', (code) => reject(new Error(`fleetgw sim exited with ${String(code)}`)));
  });
  return sim;
}

/** Runs `fleetgw …args` without blocking the event loop; resolves with its exit code and Date.now() at exit. */
export function fleetgwAsync(args: string[]): Promise<{ status: number | null; exitedAtMs: number; stderr: string }> {
  const p = spawn(process.execPath, [FLEETGW_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  p.stderr.setEncoding('utf8');
  p.stderr.on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => p.once('exit', (status) => resolve({ status, exitedAtMs: Date.now(), stderr })));
}
