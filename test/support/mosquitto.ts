/**
 * A private Debian mosquitto for tests: its own config, password file and ACL file in a temporary
 * directory, on a free loopback port (never the system service on 1883). Under CI=true a missing
 * binary fails the test file instead of skipping it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.js';
import { until } from './until.js';

export const MOSQUITTO = process.env.FLEETGW_TEST_MOSQUITTO ?? '/usr/sbin/mosquitto';
const MOSQUITTO_PASSWD = process.env.FLEETGW_TEST_MOSQUITTO_PASSWD ?? '/usr/bin/mosquitto_passwd';
export const HAVE_MOSQUITTO = existsSync(MOSQUITTO) && existsSync(MOSQUITTO_PASSWD);
if (!HAVE_MOSQUITTO && process.env.CI === 'true') throw new Error(`${MOSQUITTO} or ${MOSQUITTO_PASSWD} is missing: install Debian's mosquitto (apt-get install -y mosquitto)`);

export interface MosquittoOptions {
  /** Users of the password file (hashed with mosquitto_passwd; never on a command line). */
  users: Array<{ username: string; password: string }>;
  /** The ACL file's text (mosquitto's acl_file format). */
  acl: string;
}

/** A TLS listener's files (PEM): the CA, the server's certificate and its key. */
export interface MosquittoTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface RunningMosquitto {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** The broker's recent log (stderr, its last 8000 characters; errors, warnings and notices). */
  log(): string;
  /** Rewrites the password file and the ACL and signals the broker to reload them (SIGHUP; no reply: wait for the state you need). */
  reconfigure(opts: MosquittoOptions): void;
  /** Stops the broker (SIGKILL when `hard`) and waits for the exit. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same port with the same files. */
  restart(): Promise<void>;
  /** stop() and removes the directory. */
  close(): Promise<void>;
}

/** Starts mosquitto and resolves once it accepts connections; with `tls`, its listener speaks MQTT over TLS only (`mqtts://`). */
export async function startMosquitto(opts: MosquittoOptions, tls?: MosquittoTls): Promise<RunningMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-mosquitto-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFiles(dir, opts);
  writeFileSync(conf, [
    `listener ${port} 127.0.0.1`,
    ...(tls !== undefined ? [`cafile ${tls.caFile}`, `certfile ${tls.certFile}`, `keyfile ${tls.keyFile}`] : []),
    'allow_anonymous false',
    `password_file ${join(dir, 'passwd')}`,
    `acl_file ${join(dir, 'acl')}`,
    // Run as root, mosquitto would switch to user `mosquitto`, who cannot read these mode-0600 files.
    `user ${userInfo().username}`,
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    '',
  ].join('\n'));
  let proc: ChildProcess | null = null;
  let stderr = '';
  const killOnExit = (): void => void proc?.kill('SIGKILL');
  process.once('exit', killOnExit);
  const start = async (): Promise<void> => {
    const p = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    proc = p;
    p.stderr?.setEncoding('utf8');
    p.stderr?.on('data', (d: string) => (stderr = (stderr + d).slice(-8000)));
    await until(async () => {
      if (p.exitCode !== null) throw new Error(`mosquitto exited with ${String(p.exitCode)}: ${stderr}`);
      return accepts(port);
    }, 15_000, `mosquitto listening on ${port}`);
  };
  const stop = async (hard = false): Promise<void> => {
    const p = proc;
    if (p === null || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill(hard ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `${tls !== undefined ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`,
    port,
    dir,
    log: () => stderr,
    reconfigure(next) {
      writeFiles(dir, next);
      proc?.kill('SIGHUP');
    },
    stop,
    restart: start,
    async close() {
      await stop();
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function writeFiles(dir: string, opts: MosquittoOptions): void {
  const passwd = join(dir, 'passwd');
  // Plain `user:password` lines, then hashed in place (`-U`): no password on a command line.
  writeFileSync(passwd, opts.users.map((u) => `${u.username}:${u.password}\n`).join(''), { mode: 0o600 });
  const r = spawnSync(MOSQUITTO_PASSWD, ['-U', passwd], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mosquitto_passwd -U failed: ${r.stderr}`);
  chmodSync(passwd, 0o600);
  writeFileSync(join(dir, 'acl'), opts.acl, { mode: 0o600 });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
