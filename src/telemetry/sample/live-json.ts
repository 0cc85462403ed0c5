/**
 * The live stream's per-sample JSON message (docs/telemetry-stream.md, "sample"), from one sample's
 * values by column (the reference decoder), laid out by the field table: each column's value at its
 * `live` path, objects in the table's order, and the `mission` object null while the robot runs no
 * mission (`mission_run_id` empty). The fast decoders write the same bytes directly
 * (decode/fast-reader.ts, native-bridge/); test/telemetry/decoders.test.ts holds them to this.
 */
import type { ByteWriter } from './byte-writer.js';
import type { RowValue, RowValues } from './row-values.js';
import { HEALTH_LEVEL_NAMES, SAMPLE_FIELDS, type SampleField } from './sample-table.js';

/** JSON has no NaN/Infinity: they become null; otherwise JavaScript's own number spelling. */
function n(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : 'null';
}

/** The JSON of one column's value, by its RowBinary type. */
function valueJson(f: SampleField, v: RowValue | undefined): string {
  switch (f.rowType) {
    case 'UInt8': return String(v === true);
    case 'String': case 'Array(String)': return JSON.stringify(v);
    case 'Enum8': return `"${HEALTH_LEVEL_NAMES[v as number] ?? 'unspecified'}"`;
    default: return n(v);
  }
}

/** The message's object tree: a leaf is a column, a node an object of the message. */
export type LiveNode = { key: string; field: SampleField } | { key: string; children: LiveNode[] };

/** Columns the constant head carries ({@link liveJsonPrefix}), and the key the head ends with. */
const HEAD_COLUMNS = new Set(['robot_id', 'fleet_id']);
const HEAD_KEY = 'ts_ms';
/** The object that is null while `NULL_WHEN_EMPTY` is '' (proto: run_id is empty when the robot runs no mission). */
export const NULLABLE_OBJECT = 'mission';
export const NULL_WHEN_EMPTY = 'mission_run_id';

/** The tree of `fields` by their live paths, keys in first-seen order (built once, at module load). */
export function liveTree(fields: readonly SampleField[]): LiveNode[] {
  const root: LiveNode[] = [];
  for (const f of fields) {
    if (HEAD_COLUMNS.has(f.column)) continue;
    const path = f.live.split('.');
    let level = root;
    for (const key of path.slice(0, -1)) {
      let node = level.find((x) => x.key === key);
      if (node === undefined) level.push((node = { key, children: [] }));
      if (!('children' in node)) throw new Error(`live path ${f.live}: ${key} is a value`);
      level = node.children;
    }
    level.push({ key: path.at(-1)!, field: f });
  }
  if (root[0]?.key !== HEAD_KEY || 'children' in root[0]) throw new Error(`the live message's first value must be ${HEAD_KEY}`);
  return root;
}

function objectJson(nodes: readonly LiveNode[], v: RowValues): string {
  return `{${nodes.map((x) => `"${x.key}":${nodeJson(x, v)}`).join(',')}}`;
}

function nodeJson(x: LiveNode, v: RowValues): string {
  if ('field' in x) return valueJson(x.field, v[x.field.column]);
  if (x.key === NULLABLE_OBJECT && v[NULL_WHEN_EMPTY] === '') return 'null';
  return objectJson(x.children, v);
}

const TREE = liveTree(SAMPLE_FIELDS);

/** The constant head of every sample message of one robot, built once per task. */
export function liveJsonPrefix(robotId: string, fleetId: string): string {
  return `{"op":"sample","robot_id":${JSON.stringify(robotId)},"fleet_id":${JSON.stringify(fleetId)},"${HEAD_KEY}":`;
}

/**
 * Appends one sample message (no trailing newline: one WebSocket message per sample), laid out by
 * `tree` (the field table's unless given).
 */
export function writeLiveJson(w: ByteWriter, prefix: string, v: RowValues, tree: readonly LiveNode[] = TREE): void {
  // The head ends with the first key; its value and the rest of the object follow it.
  w.utf8(prefix + objectJson(tree, v).slice(`{"${HEAD_KEY}":`.length));
}
