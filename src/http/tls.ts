/**
 * HTTPS by default: when the operator gives no certificate, the gateway makes a self-signed one in its
 * data dir on first start and reuses it afterwards (clients can pin it). Plain HTTP is only allowed on
 * loopback, which {@link isLoopbackHost} decides.
 */
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

const VALID_DAYS = 825;

/**
 * Returns `<dataDir>/tls/cert.pem` and `key.pem`, creating a self-signed pair (SANs localhost,
 * 127.0.0.1, ::1; key file mode 0600) when either is missing.
 */
export async function ensureTlsFiles(dataDir: string): Promise<TlsFiles> {
  const dir = join(dataDir, 'tls');
  const files: TlsFiles = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') };
  if ((await exists(files.certFile)) && (await exists(files.keyFile))) return files;

  await mkdir(dir, { recursive: true, mode: 0o700 });
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + VALID_DAYS * 86_400_000);
  const pems = await generate([{ name: 'commonName', value: 'fleet-gateway' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  // Write-then-rename so a crash never leaves a half-written PEM that would fail every later start.
  await writeAtomic(files.keyFile, pems.private, 0o600);
  await writeAtomic(files.certFile, pems.cert, 0o644);
  return files;
}

/**
 * Reads the certificate and key, so that a missing or unreadable file is reported by its path before
 * anything starts (uWS itself only says `App construction failed`).
 * @throws Error `TLS certificate file <path> cannot be read: ENOENT` (or `TLS key file ...`)
 */
export async function readTlsFiles(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (path: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err: unknown) {
      throw new Error(`TLS ${what} file ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
    }
  };
  return { cert: await read(files.certFile, 'certificate'), key: await read(files.keyFile, 'key') };
}

/** True for hosts that only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h.toLowerCase() === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    // Absent (or unreadable): the caller creates the pair; a real I/O problem shows up there.
    return false;
  }
}

async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  // writeFile's mode is filtered by the umask; set it explicitly so the key is never group-readable.
  await chmod(tmp, mode);
  await rename(tmp, path);
}
