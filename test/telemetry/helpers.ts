/** Shared test helpers for the telemetry pipe: temp dirs and encoded TelemetryBatch bytes. */
import { create, toBinary } from '@bufbuild/protobuf';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HealthLevel, TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';

export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `fleetgw-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A sample with every field set, derived from `i` so rows can be checked field by field. */
export function sample(tsMs: number, i: number, extra: { faults?: string[]; mode?: string; runId?: string } = {}): TelemetrySample {
  return create(TelemetrySampleSchema, {
    tsMs: BigInt(tsMs),
    position: { latitude: 48.1 + i / 1e4, longitude: 11.5 + i / 1e4, elevationM: 520 + i },
    pose: { xM: i, yM: i * 2, zM: 0.5, headingDeg: (i * 7) % 360 },
    velocity: { linearMps: 1.25, angularDps: -3.5 },
    battery: { percent: 80, voltageV: 48.5, charging: i % 2 === 0 },
    mode: extra.mode ?? 'autonomous',
    estop: i % 5 === 0,
    mission: { runId: extra.runId ?? `run-${i % 3}`, missionState: 'running', progressPct: 42.5, stepIndex: i % 10, remainingDistanceM: 100.5, etaS: 60 },
    health: { level: HealthLevel.WARN, faults: extra.faults ?? ['motor_overtemp'], cpuTempC: 55.5 },
    gpsFix: 4,
  });
}

/** Encodes `count` samples with ts from `startTs` in 10 ms steps; sample i uses `startIndex + i`. */
export function encodeBatch(startTs: number, count: number, startIndex = 0): Uint8Array {
  const samples: TelemetrySample[] = [];
  for (let i = 0; i < count; i++) samples.push(sample(startTs + i * 10, startIndex + i));
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples }));
}

export function encodeSamples(samples: TelemetrySample[]): Uint8Array {
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples }));
}

/** Bytes that are not a valid TelemetryBatch (field 1, wire type 2, length past the end). */
export const CORRUPT_FRAME = new Uint8Array([0x0a, 0xff, 0x01, 0x02]);

export async function until(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
