/**
 * The telemetry disk spool: every insert block is written here before its insert,
 * which is what makes a batch "durable" for the robot's receipt, and stays here until the store has
 * it. A gateway killed at any moment finds the blocks it had not inserted at its next start and
 * replays them; a store outage fills the spool instead of memory.
 *
 * Layout of `<dataDir>/telemetry-spool/`:
 * - `<name>.rows`: the block's RowBinary rows, exactly what the INSERT sends (chdb reads it in place).
 * - `<name>.meta`: written after the rows, so a block counts only once both are complete: row count,
 *   byte length, and the durable point (`epoch`, `seq`) of every robot whose batches it holds.
 * - `checkpoint`: the durable points of blocks already inserted (their files are gone), rewritten
 *   (write, then rename) after each insert and before its files are removed; a robot resending after
 *   a crash is deduplicated against it.
 * `<name>` is `<ms>-<random>-<n>`: it sorts in write order and is the block's insert deduplication
 * token, unique across gateways writing to one ClickHouse (the random part differs per process).
 *
 * Bound: `maxBytes` of rows files; {@link hasRoom} says whether a block fits (the insert queue then
 * waits, and the robots are slowed by backpressure). Files are written without fsync: they survive
 * the gateway's crash or SIGKILL (the page cache is the kernel's), not a power cut of the machine.
 * All I/O is asynchronous (libuv's pool), never on the event loop.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DurablePoint } from './ack-tracker.js';

/** A block on disk. */
export interface SpooledBlock {
  /** File stem, also the insert deduplication token. */
  name: string;
  rowsPath: string;
  bytes: number;
  rows: number;
  points: Map<string, DurablePoint>;
}

const META_MAGIC = 'FGWSPM1\n';
const CKPT_MAGIC = 'FGWSPC1\n';
const CHECKPOINT = 'checkpoint';

/** Encodes durable points after an 8-byte magic and a fixed header of `head` float64s. */
function encodePoints(magic: string, head: number[], points: ReadonlyMap<string, DurablePoint>): Buffer {
  let len = 8 + 8 * head.length + 4;
  const ids: Buffer[] = [];
  for (const id of points.keys()) {
    const b = Buffer.from(id, 'utf8');
    ids.push(b);
    len += 2 + b.length + 16;
  }
  const out = Buffer.allocUnsafe(len);
  let pos = out.write(magic, 0, 'latin1');
  for (const h of head) pos = out.writeDoubleLE(h, pos);
  pos = out.writeUInt32LE(points.size, pos);
  let i = 0;
  for (const p of points.values()) {
    const id = ids[i++]!;
    pos = out.writeUInt16LE(id.length, pos);
    pos += id.copy(out, pos);
    pos = out.writeDoubleLE(p.epoch, pos);
    pos = out.writeDoubleLE(p.seq, pos);
  }
  return out;
}

/** Decodes what {@link encodePoints} wrote; throws on a torn or foreign file. */
function decodePoints(magic: string, headCount: number, buf: Buffer): { head: number[]; points: Map<string, DurablePoint> } {
  if (buf.length < 12 + 8 * headCount || buf.toString('latin1', 0, 8) !== magic) throw new Error('not a spool file');
  let pos = 8;
  const head: number[] = [];
  for (let i = 0; i < headCount; i++, pos += 8) head.push(buf.readDoubleLE(pos));
  const n = buf.readUInt32LE(pos);
  pos += 4;
  const points = new Map<string, DurablePoint>();
  for (let i = 0; i < n; i++) {
    const len = buf.readUInt16LE(pos);
    const id = buf.toString('utf8', pos + 2, pos + 2 + len);
    pos += 2 + len;
    points.set(id, { epoch: buf.readDoubleLE(pos), seq: buf.readDoubleLE(pos + 8) });
    pos += 16;
  }
  if (pos !== buf.length) throw new Error('spool file has trailing bytes');
  return { head, points };
}

/** What the spool held at start-up. */
export interface SpoolRecovery {
  /** Complete blocks not known to be inserted, oldest first: replay them. */
  blocks: SpooledBlock[];
  /** Durable points of the checkpoint (blocks inserted before the restart). */
  checkpoint: Map<string, DurablePoint>;
  /** Incomplete files removed (a crash during their write: never acknowledged to a robot). */
  removedPartial: number;
}

export class TelemetrySpool {
  private usedBytes = 0;
  private next = 0;
  private readonly prefix = `${randomBytes(4).toString('hex')}`;

  private constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /** Opens (creates) the spool directory and reads what a previous process left in it. */
  static async open(dir: string, maxBytes: number): Promise<{ spool: TelemetrySpool; recovery: SpoolRecovery }> {
    if (!(maxBytes > 0)) throw new Error('telemetry spool size must be positive');
    await mkdir(dir, { recursive: true });
    const spool = new TelemetrySpool(dir, maxBytes);
    const names = (await readdir(dir)).sort();
    const stems = new Set<string>();
    for (const n of names) if (n.endsWith('.rows') || n.endsWith('.meta')) stems.add(n.slice(0, -5));
    const blocks: SpooledBlock[] = [];
    let removedPartial = 0;
    for (const name of [...stems].sort()) {
      const rowsPath = join(dir, `${name}.rows`);
      const metaPath = join(dir, `${name}.meta`);
      try {
        const meta = decodePoints(META_MAGIC, 2, await readFile(metaPath));
        const [rows, bytes] = meta.head as [number, number];
        if ((await stat(rowsPath)).size !== bytes) throw new Error('rows file length differs from its meta');
        blocks.push({ name, rowsPath, bytes, rows, points: meta.points });
        spool.usedBytes += bytes;
      } catch {
        removedPartial++;
        await unlink(rowsPath).catch(() => {});
        await unlink(metaPath).catch(() => {});
      }
    }
    let checkpoint = new Map<string, DurablePoint>();
    try {
      checkpoint = decodePoints(CKPT_MAGIC, 0, await readFile(join(dir, CHECKPOINT))).points;
    } catch {
      // No checkpoint yet (a new spool), or a torn one (only `.tmp` is ever torn: rename is atomic).
    }
    return { spool, recovery: { blocks, checkpoint, removedPartial } };
  }

  /** Bytes of rows files on disk. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** Whether a block of `bytes` fits under the bound (an empty spool takes any one block). */
  hasRoom(bytes: number): boolean {
    return this.usedBytes === 0 || this.usedBytes + bytes <= this.maxBytes;
  }

  /** Writes a block (rows, then meta); once this resolves the block survives a crash. */
  async write(chunks: readonly Uint8Array[], bytes: number, rows: number, points: ReadonlyMap<string, DurablePoint>): Promise<SpooledBlock> {
    const name = `${String(Date.now()).padStart(15, '0')}-${this.prefix}-${String(this.next++).padStart(9, '0')}`;
    const rowsPath = join(this.dir, `${name}.rows`);
    this.usedBytes += bytes;
    try {
      const fh = await open(rowsPath, 'wx');
      try {
        let written = 0;
        // writev takes at most IOV_MAX (1024) buffers per call on Linux.
        for (let i = 0; i < chunks.length; i += 1024) written += (await fh.writev(chunks.slice(i, i + 1024))).bytesWritten;
        if (written !== bytes) throw new Error(`spool write incomplete: ${written} of ${bytes} bytes`);
      } finally {
        await fh.close();
      }
      await writeFile(join(this.dir, `${name}.meta`), encodePoints(META_MAGIC, [rows, bytes], points));
    } catch (e) {
      this.usedBytes -= bytes;
      await unlink(rowsPath).catch(() => {});
      throw e;
    }
    return { name, rowsPath, bytes, rows, points: new Map(points) };
  }

  /** The block's rows (a replay to a store that takes bytes). */
  read(block: SpooledBlock): Promise<Buffer> {
    return readFile(block.rowsPath);
  }

  /** Records durable points of inserted blocks; call before {@link remove} of those blocks. */
  async checkpoint(points: ReadonlyMap<string, DurablePoint>): Promise<void> {
    const tmp = join(this.dir, `${CHECKPOINT}.tmp`);
    await writeFile(tmp, encodePoints(CKPT_MAGIC, [], points));
    await rename(tmp, join(this.dir, CHECKPOINT));
  }

  /** Removes an inserted block (meta first: a rows file alone is discarded at the next start). */
  async remove(block: SpooledBlock): Promise<void> {
    await unlink(join(this.dir, `${block.name}.meta`)).catch(() => {});
    await unlink(block.rowsPath).catch(() => {});
    this.usedBytes -= block.bytes;
  }
}
