/**
 * A throwaway certificate authority made with Debian's openssl for tests that run a TLS server: a CA
 * certificate and a server certificate it signed for 127.0.0.1 and localhost. Under CI=true a missing
 * openssl fails the test file (test/deploy/tools.ts).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingTools } from '../deploy/tools.js';

export const OPENSSL = '/usr/bin/openssl';
/** Whether openssl is installed (throws under CI=true when it is not). */
export const HAVE_OPENSSL = missingTools([OPENSSL], 'openssl').length === 0;

export interface TestCa {
  /** The CA certificate (PEM): what a client trusts. */
  caFile: string;
  /** The server's certificate (PEM), signed by the CA, for IP 127.0.0.1 and DNS localhost. */
  certFile: string;
  /** The server's private key (PEM, mode 0600). */
  keyFile: string;
}

function openssl(args: string[]): void {
  const r = spawnSync(OPENSSL, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0] ?? ''} exited ${String(r.status)}: ${r.stderr}`);
}

/** Makes a CA named `name` and a server certificate it signed, as files `name`-* in `dir`. */
export function makeTestCa(dir: string, name = 'test'): TestCa {
  const f = (suffix: string): string => join(dir, `${name}-${suffix}`);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', `/CN=${name} test CA`]);
  openssl(['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1']);
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl(['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.crt'), '-days', '2', '-extfile', f('server.ext')]);
  return { caFile: f('ca.crt'), certFile: f('server.crt'), keyFile: f('server.key') };
}
