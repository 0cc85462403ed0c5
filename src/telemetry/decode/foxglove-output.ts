/**
 * The Foxglove messages of one decode task, written by the decode worker (never the event loop) from
 * the task's RowBinary rows: for each sample of a robot some Foxglove socket subscribes to, one
 * `foxglove.LocationFix`, `foxglove.PoseInFrame` and/or `fleetgw.RobotStatus` message
 * (foxglove-channels.ts), each already framed as the protocol's binary MESSAGE_DATA frame
 * (`0x01 | subscription id u32 | timestamp u64 ns | JSON payload`, little-endian) with the
 * subscription id left 0: the hub writes it per subscriber into its copy.
 *
 * Why from the rows rather than inside the decoders: the rows are the one output all three decoders
 * (C++ addon, fast reader, reference) write identically, so this needs no change to any of them, and
 * it costs nothing unless a Foxglove socket subscribes (the mask is null then).
 */
import { ByteWriter, FOXGLOVE_KINDS, COLUMN_INDEX, forEachRow, type RowValue, HEALTH_LEVEL_NAMES } from '../sample/index.js';
import type { FoxgloveBatch } from './worker-protocol.js';

/** Bytes before the payload: opcode, subscription id, timestamp. */
export const FOXGLOVE_FRAME_HEADER_BYTES = 13;
/** The protocol's binary opcode of a message (ws-protocol's BinaryOpcode.MESSAGE_DATA; a const here so the worker loads no client code). */
const MESSAGE_DATA = 1;

const COLUMNS = ['robot_id', 'fleet_id', 'ts_ms', 'lat', 'lon', 'elevation_m', 'pose_x_m', 'pose_y_m', 'pose_z_m', 'heading_deg', 'battery_pct', 'voltage_v', 'charging', 'mode', 'estop', 'gps_fix', 'mission_run_id', 'mission_state', 'progress_pct', 'step_index', 'remaining_distance_m', 'eta_s', 'health_level', 'faults', 'cpu_temp_c'] as const;
/** Slots of the columns read here, resolved once (a renamed column fails at load, not silently). */
const I = Object.fromEntries(
  COLUMNS.map((c) => {
    const i = COLUMN_INDEX[c];
    if (i === undefined) throw new Error(`foxglove output: no column ${c} in the sample table`);
    return [c, i];
  }),
) as Readonly<Record<(typeof COLUMNS)[number], number>>;

const writer = new ByteWriter(64 * 1024);
const DEG = Math.PI / 180;

function num(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : 'null';
}

function finite(...vs: unknown[]): boolean {
  for (const v of vs) if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  return true;
}

/** Starts a frame: header with subscription id 0 and the sample time in ns. */
function head(w: ByteWriter, ns: bigint): void {
  w.u8(MESSAGE_DATA);
  w.i32(0);
  w.i64big(ns);
}

function writeLocation(w: ByteWriter, v: readonly RowValue[], time: string, robotId: string): boolean {
  if (!finite(v[I.lat], v[I.lon], v[I.elevation_m])) return false; // no fix: nothing a map could place
  const heading = finite(v[I.heading_deg]) ? `,"heading":${String((v[I.heading_deg] as number) * DEG)}` : '';
  w.utf8(
    `{"timestamp":${time},"frame_id":${JSON.stringify(robotId)},"latitude":${num(v[I.lat])},"longitude":${num(v[I.lon])},` +
      `"altitude":${num(v[I.elevation_m])},"position_covariance":[0,0,0,0,0,0,0,0,0],"position_covariance_type":0${heading}}`,
  );
  return true;
}

function writePose(w: ByteWriter, v: readonly RowValue[], time: string): boolean {
  if (!finite(v[I.pose_x_m], v[I.pose_y_m], v[I.pose_z_m], v[I.heading_deg])) return false;
  // The depot frame is taken as x east, y north, z up (ROS REP 103): heading (clockwise from north)
  // becomes yaw (counter-clockwise from x), a rotation about z.
  const yaw = (90 - (v[I.heading_deg] as number)) * DEG;
  w.utf8(
    `{"timestamp":${time},"frame_id":"depot","pose":{"position":{"x":${num(v[I.pose_x_m])},"y":${num(v[I.pose_y_m])},"z":${num(v[I.pose_z_m])}},` +
      `"orientation":{"x":0,"y":0,"z":${String(Math.sin(yaw / 2))},"w":${String(Math.cos(yaw / 2))}}}}`,
  );
  return true;
}

/** `,"name":value` for a finite number, else nothing (the status schema has no nulls: foxglove-channels.ts). */
function opt(name: string, v: unknown): string {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isFinite(v)) ? `,"${name}":${String(v)}` : '';
}

function writeStatus(w: ByteWriter, v: readonly RowValue[], time: string): void {
  const runId = v[I.mission_run_id] as string;
  const mission = runId === ''
    ? ''
    : `,"mission":{"run_id":${JSON.stringify(runId)},"mission_state":${JSON.stringify(v[I.mission_state])}` +
      `${opt('mission_progress_pct', v[I.progress_pct])}${opt('current_step_index', v[I.step_index])}${opt('remaining_distance_m', v[I.remaining_distance_m])}${opt('estimated_time_remaining_s', v[I.eta_s])}}`;
  w.utf8(
    `{"timestamp":${time},"robot_id":${JSON.stringify(v[I.robot_id])},"fleet_id":${JSON.stringify(v[I.fleet_id])},` +
      `"mode":${JSON.stringify(v[I.mode])},"estop":${String(v[I.estop] === true)},` +
      `"battery":{"charging":${String(v[I.charging] === true)}${opt('percent', v[I.battery_pct])}${opt('voltage_v', v[I.voltage_v])}},` +
      `"health":{"level":"${HEALTH_LEVEL_NAMES[v[I.health_level] as number] ?? 'unspecified'}","faults":${JSON.stringify(v[I.faults])}${opt('cpu_temp_c', v[I.cpu_temp_c])}}` +
      `${opt('gps_fix', v[I.gps_fix])}${mission}}`,
  );
}

/**
 * The Foxglove frames of the rows of one task. `mask` holds, per robot index, the kinds some socket
 * subscribes to (bits of {@link FOXGLOVE_KINDS}); null or all zero: no output.
 */
export function foxgloveOutput(rows: Uint8Array, robotIds: readonly string[], mask: Uint8Array | null): FoxgloveBatch | null {
  if (mask === null || !mask.some((b) => b !== 0)) return null;
  const robotIndex = new Map<string, number>();
  robotIds.forEach((id, i) => {
    if (mask[i] !== 0) robotIndex.set(id, i);
  });
  const w = writer;
  w.pos = 0;
  const index: number[] = [];
  forEachRow(rows, (v) => {
    const ri = robotIndex.get(v[I.robot_id] as string);
    if (ri === undefined) return;
    const bits = mask[ri]!;
    // The protocol wants ns; the Time fields sec/nsec. Robot clocks before 1970 are clamped to 0.
    const ms = (v[I.ts_ms] as bigint) < 0n ? 0n : (v[I.ts_ms] as bigint);
    const ns = ms * 1_000_000n;
    const time = `{"sec":${String(ms / 1000n)},"nsec":${String((ms % 1000n) * 1_000_000n)}}`;
    for (let k = 0; k < FOXGLOVE_KINDS.length; k++) {
      if ((bits & FOXGLOVE_KINDS[k]!.bit) === 0) continue;
      const start = w.pos;
      head(w, ns);
      const wrote = k === 0 ? writeLocation(w, v, time, v[I.robot_id] as string) : k === 1 ? writePose(w, v, time) : (writeStatus(w, v, time), true);
      if (wrote) index.push(ri, k, start, w.pos);
      else w.pos = start;
    }
  });
  if (index.length === 0) return null;
  return { data: w.copyOut(), index: Uint32Array.from(index), robotIds: [...robotIds] };
}
