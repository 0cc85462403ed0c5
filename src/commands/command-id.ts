/**
 * Command ids: UUIDv7 (RFC 9562): 48 bits of Unix time in ms, then random bits.
 *
 * Why not v4: command records are keyed by id in LMDB. Random keys put each new record on a random
 * B-tree leaf page, so a 100-robot stop_all dirtied about a hundred pages of the `commands` db, and the
 * disk flush after every commit (the LMDB writer's sync threads) cost CPU in proportion. Time-ordered
 * ids append: the same 100 records fill one or two pages. They are still UUID strings (the spec asks
 * no particular version) and still unguessable enough for an identifier that is never a credential.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 10 * 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A new UUIDv7 string (lowercase). */
export function newCommandId(nowMs: number = Date.now()): string {
  if (poolAt + 10 > POOL_BYTES) {
    // Random bytes come from a refilled pool: one syscall per 4096 ids, not one per id.
    randomFillSync(pool);
    poolAt = 0;
  }
  const r = poolAt;
  poolAt += 10;
  const ms = Math.max(0, Math.floor(nowMs));
  const hi = Math.floor(ms / 0x1000000) & 0xffffff; // top 24 of the 48 time bits
  const lo = ms % 0x1000000; // low 24 bits
  const h = (n: number): string => HEX[n & 0xff] as string;
  return (
    h(hi >> 16) + h(hi >> 8) + h(hi) + h(lo >> 16) + '-' + h(lo >> 8) + h(lo) + '-'
    + h(0x70 | (pool[r]! & 0x0f)) + h(pool[r + 1]!) + '-'
    + h(0x80 | (pool[r + 2]! & 0x3f)) + h(pool[r + 3]!) + '-'
    + h(pool[r + 4]!) + h(pool[r + 5]!) + h(pool[r + 6]!) + h(pool[r + 7]!) + h(pool[r + 8]!) + h(pool[r + 9]!)
  );
}
