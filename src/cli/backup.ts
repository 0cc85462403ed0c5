/**
 * `fleetgw admin backup` and `fleetgw admin restore`: what a data dir needs to serve as the same
 * gateway (LMDB, the metrics token Prometheus holds, the TLS pair the gateway made there unless
 * `--no-tls`) copied while the gateway runs, and put back into an empty data dir. Telemetry rows are not part of it: a ClickHouse server has its own backups, and the
 * embedded chdb directory is copied with the gateway stopped (docs/operations.md, "Backup and restore").
 *
 * A backup directory holds `lmdb/data.mdb`, `tls/` (when the data dir has one), `metrics-token` (when
 * the data dir has one: the default of `--metrics-token-file`) and `manifest.json` (format, time,
 * what it holds, entry counts per database). It is written under a temporary name and renamed when
 * complete and verified, so a directory with the final name is always a whole backup.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { skipSeqsAfterRestore } from '../commands/restore-seq.js';
import { copyStore, countStore, type StoreCounts } from '../store/backup.js';
import { openStore } from '../store/lmdb.js';
import { parseStrict, req } from './args.js';
import { UsageError } from './usage.js';

const FORMAT = 'fleetgw-backup/1';

interface Manifest {
  format: typeof FORMAT;
  createdAt: string;
  sourceDataDir: string;
  compacted: boolean;
  tls: boolean;
  /** `<dataDir>/metrics-token` is in the backup (absent in backups made before it was). */
  metricsToken?: boolean;
  counts: StoreCounts;
}

/** The metrics token's default file in a data dir (`fleetgw serve --metrics-token-file`). */
const METRICS_TOKEN = 'metrics-token';

/** Copies the regular files of `from` into `to` (created 0700), keeping each file's mode. */
function copyDir(from: string, to: string): void {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isFile()) copyFileSync(join(from, e.name), join(to, e.name));
  }
}

function sameCounts(a: StoreCounts, b: StoreCounts): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** `admin backup --data-dir D --out DIR [--compact] [--no-tls] [--json]`. */
export async function runBackup(argv: string[], out: (line: string) => void): Promise<number> {
  const v = parseStrict(argv, { 'data-dir': { type: 'string' }, out: { type: 'string' }, compact: { type: 'boolean' }, 'no-tls': { type: 'boolean' }, json: { type: 'boolean' } });
  const dataDir = resolve(req(v, 'data-dir'));
  const target = resolve(req(v, 'out'));
  if (!existsSync(join(dataDir, 'lmdb', 'data.mdb'))) throw new UsageError(`${dataDir} holds no gateway data (no lmdb/data.mdb)`);
  if (existsSync(target)) throw new UsageError(`--out ${target} exists: name a new directory`);
  if (!existsSync(dirname(target))) throw new UsageError(`--out: the parent directory ${dirname(target)} does not exist`);
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  mkdirSync(partial, { mode: 0o700 });
  try {
    const compact = v.compact === true;
    await copyStore(dataDir, partial, compact);
    const tls = v['no-tls'] !== true && existsSync(join(dataDir, 'tls'));
    if (tls) copyDir(join(dataDir, 'tls'), join(partial, 'tls'));
    // Without it a restored gateway would make a new token and every Prometheus scrape would get 401.
    const metricsToken = existsSync(join(dataDir, METRICS_TOKEN));
    if (metricsToken) copyFileSync(join(dataDir, METRICS_TOKEN), join(partial, METRICS_TOKEN));
    // Counting opens the copy: a backup that LMDB cannot open fails here, not at restore time.
    const counts = await countStore(partial);
    const manifest: Manifest = { format: FORMAT, createdAt: new Date().toISOString(), sourceDataDir: dataDir, compacted: compact, tls, metricsToken, counts };
    writeFileSync(join(partial, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    renameSync(partial, target);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    out(v.json === true ? JSON.stringify({ backup: target, ...manifest }) : `backup ${target}: ${total} entries in ${Object.keys(counts).length} databases${tls ? ', TLS pair' : ''}${metricsToken ? ', metrics token' : ''}`);
    return 0;
  } catch (e) {
    rmSync(partial, { recursive: true, force: true });
    throw e;
  }
}

/** `admin restore --from DIR --data-dir D [--json]`: into a data dir without LMDB data only. */
export async function runRestore(argv: string[], out: (line: string) => void): Promise<number> {
  const v = parseStrict(argv, { from: { type: 'string' }, 'data-dir': { type: 'string' }, json: { type: 'boolean' } });
  const from = resolve(req(v, 'from'));
  const dataDir = resolve(req(v, 'data-dir'));
  let parsed: { format?: unknown };
  try {
    parsed = JSON.parse(readFileSync(join(from, 'manifest.json'), 'utf8')) as { format?: unknown };
  } catch {
    throw new UsageError(`--from ${from} is not a backup (no readable manifest.json)`);
  }
  if (parsed.format !== FORMAT) throw new UsageError(`--from ${from}: unknown backup format '${String(parsed.format)}' (this gateway reads ${FORMAT})`);
  const manifest = parsed as Manifest;
  // Never over live data: a running gateway would keep its open environment and lose the restore.
  if (existsSync(join(dataDir, 'lmdb', 'data.mdb'))) {
    throw new UsageError(`${dataDir} already holds gateway data: stop the gateway and move that data dir away first, then restore into an empty one`);
  }
  const counts = await countStore(from);
  if (!sameCounts(counts, manifest.counts)) throw new Error(`backup ${from} does not match its manifest (entry counts differ): it is damaged`);
  mkdirSync(join(dataDir, 'lmdb'), { recursive: true, mode: 0o700 });
  copyFileSync(join(from, 'lmdb', 'data.mdb'), join(dataDir, 'lmdb', 'data.mdb'));
  if (manifest.tls) copyDir(join(from, 'tls'), join(dataDir, 'tls'));
  if (manifest.metricsToken === true) copyFileSync(join(from, METRICS_TOKEN), join(dataDir, METRICS_TOKEN));
  const restored = await countStore(dataDir);
  if (!sameCounts(restored, manifest.counts)) throw new Error(`restored data in ${dataDir} does not match the backup's manifest`);
  // Robots may have applied higher command seqs since the backup: never hand those out again.
  const store = openStore(dataDir);
  let robotsSkipped: number;
  try {
    robotsSkipped = await skipSeqsAfterRestore(store);
  } finally {
    await store.close();
  }
  out(v.json === true ? JSON.stringify({ restored: dataDir, from, createdAt: manifest.createdAt, counts: restored, commandSeqsSkippedForRobots: robotsSkipped }) : `restored ${from} (taken ${manifest.createdAt}) into ${dataDir}`);
  return 0;
}
