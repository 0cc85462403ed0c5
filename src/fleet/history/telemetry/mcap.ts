/**
 * One robot's samples as an MCAP file that Foxglove (and any MCAP reader) opens
 * (docs/telemetry-history.md, MCAP export). JSON messages on three channels, each with its JSON
 * schema in the file:
 * - `/location`: `foxglove.LocationFix` (the @foxglove/schemas JSON schema): the map panel;
 * - `/pose`: `foxglove.PoseInFrame` in the robot's local frame (`depot`: x east, y north, metres);
 * - `/telemetry`: `fleetgw.TelemetrySample`, every stored field under its REST name: plots and raw
 *   messages.
 * Chunked, uncompressed (MCAP's compressions are lz4 and zstd, neither in Node), with the summary
 * section and indexes so readers can seek.
 */
import { McapWriter, type IWritable } from '@mcap/core';
import { LocationFix, PoseInFrame } from '@foxglove/schemas/jsonschema.js';
import { HISTORY_FIELDS, type HistoryKind } from './fields.js';
import type { HistoryRange } from './limits.js';
import type { HistorySample } from './samples.js';

/** The local frame poses are in (the robots' `pose` is depot-relative metres, x east, y north). */
export const POSE_FRAME = 'depot';
/** The frame of a location fix (the robot's GNSS antenna, taken as the robot itself). */
export const FIX_FRAME = 'base_link';
export const TELEMETRY_SCHEMA_NAME = 'fleetgw.TelemetrySample';

const KIND_SCHEMA: Record<HistoryKind, Record<string, unknown>> = {
  number: { type: ['number', 'null'] },
  boolean: { type: 'boolean' },
  string: { type: 'string' },
  strings: { type: 'array', items: { type: 'string' } },
};

/** The JSON schema of a `/telemetry` message, derived from the telemetry field table. */
export const TELEMETRY_JSON_SCHEMA = {
  title: TELEMETRY_SCHEMA_NAME,
  description: 'One stored telemetry sample of a fleet-gateway robot; field names as in GET /v1/robots/{robot_id}/telemetry.',
  type: 'object',
  properties: {
    timestamp: { type: 'object', properties: { sec: { type: 'integer', minimum: 0 }, nsec: { type: 'integer', minimum: 0, maximum: 999_999_999 } }, required: ['sec', 'nsec'] },
    ...Object.fromEntries(HISTORY_FIELDS.map((f) => [f.name, KIND_SCHEMA[f.kind]])),
  },
  required: ['timestamp', ...HISTORY_FIELDS.map((f) => f.name)],
};

/** Where an export's bytes go (the HTTP response: src/api/stream-body.ts). */
export interface ByteSink {
  /** Takes `chunk` (copied or sent before it resolves) and resolves when the next may follow. */
  write(chunk: Uint8Array): Promise<void>;
  /** Aborted when the client went away: the export stops reading. */
  readonly signal?: AbortSignal;
}

/** The writer's output, passed on to the sink as the writer produces it (a chunk at a time). */
class SinkWritable implements IWritable {
  #size = 0n;
  constructor(private readonly sink: ByteSink) {}
  async write(buffer: Uint8Array): Promise<void> {
    this.#size += BigInt(buffer.byteLength);
    await this.sink.write(buffer);
  }
  position(): bigint {
    return this.#size;
  }
}

/** How an export ended (also written into the file as the `fleetgw.export.result` metadata). */
export interface McapResult {
  samples: number;
  /** False when the byte cap ended it before the range did. */
  complete: boolean;
  /**
   * When not complete: the `from_ms` of an export that continues it, always past the first timestamp
   * this file holds (the cap falls between timestamps; the continuation writes none of this file's).
   */
  nextFromMs: number | null;
  /** Samples of the file's first timestamp left out because that timestamp alone passed the cap. */
  skipped: number;
}

// Per message: the record's header, channel, sequence and times, and its entry in the chunk index.
const MESSAGE_OVERHEAD = 50;

const encoder = new TextEncoder();
const json = (v: unknown): Uint8Array => encoder.encode(JSON.stringify(v));

function stamp(tsMs: number): { sec: number; nsec: number } {
  return { sec: Math.floor(tsMs / 1000), nsec: (tsMs % 1000) * 1_000_000 };
}

/** A yaw quaternion from a compass heading (degrees clockwise from north) in an x-east, y-north frame. */
function headingQuaternion(headingDeg: number): { x: number; y: number; z: number; w: number } {
  const yaw = ((90 - headingDeg) * Math.PI) / 180;
  return { x: 0, y: 0, z: Math.sin(yaw / 2), w: Math.cos(yaw / 2) };
}

/** A numeric field; null (the robot sent NaN or an infinity) reads as NaN so checks below skip it. */
const num = (s: HistorySample, name: string): number => (s[name] as number | null) ?? Number.NaN;

/**
 * Writes the MCAP file of `robotId` over `range` into `sink`: `pages` yields the samples in time order
 * a page at a time, and each page is written (and the sink's backpressure waited on) before the next
 * is read. Messages stop at `maxBytes`: the file still ends properly, with its summary, and its
 * `fleetgw.export.result` metadata says it is not complete and where to continue.
 */
export async function writeMcap(robotId: string, range: HistoryRange, pages: AsyncIterable<readonly HistorySample[]>, sink: ByteSink, maxBytes: number): Promise<McapResult> {
  const writer = new McapWriter({ writable: new SinkWritable(sink) });
  await writer.start({ profile: '', library: 'fleet-gateway' });
  const schema = async (name: string, s: unknown): Promise<number> => writer.registerSchema({ name, encoding: 'jsonschema', data: json(s) });
  const channel = async (topic: string, schemaId: number): Promise<number> =>
    writer.registerChannel({ topic, schemaId, messageEncoding: 'json', metadata: new Map([['robot_id', robotId]]) });
  const location = await channel('/location', await schema('foxglove.LocationFix', LocationFix));
  const pose = await channel('/pose', await schema('foxglove.PoseInFrame', PoseInFrame));
  const telemetry = await channel('/telemetry', await schema(TELEMETRY_SCHEMA_NAME, TELEMETRY_JSON_SCHEMA));
  await writer.addMetadata({ name: 'fleetgw.export', metadata: new Map([['robot_id', robotId], ['from_ms', String(range.fromMs)], ['to_ms', String(range.toMs)]]) });
  let sequence = 0;
  let bytes = 0;
  let samples = 0;
  let skipped = 0;
  let nextFromMs: number | null = null;
  type Sample = { tsMs: number; messages: { channelId: number; data: Uint8Array }[]; size: number };
  const write = async (x: Sample): Promise<void> => {
    bytes += x.size;
    samples++;
    const time = BigInt(x.tsMs) * 1_000_000n;
    for (const m of x.messages) await writer.addMessage({ channelId: m.channelId, sequence: sequence++, logTime: time, publishTime: time, data: m.data });
  };
  // The cap applies between timestamps, so `next_from_ms` always moves on: a continuation starting at
  // a timestamp never rewrites what this file holds. A first timestamp larger than the cap on its own
  // is written as far as it fits, the rest of it skipped, and the continuation starts after it.
  const writeGroup = async (group: Sample[]): Promise<boolean> => {
    const size = group.reduce((n, x) => n + x.size, 0);
    const tsMs = group[0]!.tsMs;
    if (bytes + size <= maxBytes) {
      for (const x of group) await write(x);
      return true;
    }
    if (samples > 0) {
      nextFromMs = tsMs;
      return false;
    }
    let i = 0;
    while (i < group.length && bytes + group[i]!.size <= maxBytes) await write(group[i++]!);
    skipped = group.length - i;
    nextFromMs = tsMs + 1;
    return false;
  };
  let group: Sample[] = [];
  let open = true;
  pages: for await (const page of pages) {
    for (const s of page) {
      const tsMs = num(s, 'tsMs');
      const messages = sampleMessages(s, tsMs, location, pose, telemetry);
      const size = messages.reduce((n, m) => n + m.data.byteLength + MESSAGE_OVERHEAD, 0);
      if (group.length > 0 && group[0]!.tsMs !== tsMs) {
        open = await writeGroup(group);
        group = [];
        if (!open) break pages;
      }
      group.push({ tsMs, messages, size });
    }
  }
  if (open && group.length > 0) await writeGroup(group);
  const result: McapResult = { samples, complete: nextFromMs === null, nextFromMs, skipped };
  await writer.addMetadata({
    name: 'fleetgw.export.result',
    metadata: new Map([
      ['samples', String(samples)],
      ['complete', String(result.complete)],
      ...(nextFromMs === null ? [] : [['next_from_ms', String(nextFromMs)] as [string, string]]),
      ...(skipped === 0 ? [] : [['skipped', String(skipped)] as [string, string]]),
    ]),
  });
  await writer.end();
  return result;
}

/** A sample's messages: a fix when it has one, a pose when finite, and the sample itself. */
function sampleMessages(s: HistorySample, tsMs: number, location: number, pose: number, telemetry: number): { channelId: number; data: Uint8Array }[] {
  const timestamp = stamp(tsMs);
  const out: { channelId: number; data: Uint8Array }[] = [];
  const lat = num(s, 'latitude');
  const lon = num(s, 'longitude');
  const alt = num(s, 'elevationM');
  // A fix needs finite coordinates other than 0/0 (no position sent) and altitude (the schema
  // requires it); the heading is optional there and left out when unknown.
  if (Number.isFinite(lat) && Number.isFinite(lon) && Number.isFinite(alt) && (lat !== 0 || lon !== 0)) {
    out.push({ channelId: location, data: json({
      timestamp,
      frame_id: FIX_FRAME,
      latitude: lat,
      longitude: lon,
      altitude: alt,
      position_covariance: [0, 0, 0, 0, 0, 0, 0, 0, 0],
      position_covariance_type: 0,
      ...(Number.isFinite(num(s, 'headingDeg')) ? { heading: (num(s, 'headingDeg') * Math.PI) / 180 } : {}),
    }) });
  }
  const pose3 = [num(s, 'poseXM'), num(s, 'poseYM'), num(s, 'poseZM'), num(s, 'headingDeg')];
  if (pose3.every((v) => Number.isFinite(v))) {
    const [x, y, z, heading] = pose3 as [number, number, number, number];
    out.push({ channelId: pose, data: json({ timestamp, frame_id: POSE_FRAME, pose: { position: { x, y, z }, orientation: headingQuaternion(heading) } }) });
  }
  out.push({ channelId: telemetry, data: json({ timestamp, ...s }) });
  return out;
}
