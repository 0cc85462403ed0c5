/**
 * A telemetry field is added the way docs/adding-a-telemetry-field.md says: a row of the field table
 * (plus the proto, the C++ decoder, the migration and the simulator), then `npm run gen`. Here a
 * made-up row (`probe_temp_c`, health field 15, so it never meets a real one) is given to each generator and must appear in every form derived from
 * the table (the DDL files, the JS reader, the live message, the agent's encoder, the REST view);
 * and the checked-in derived files must be what the generators write from the real table, so a row
 * added without `npm run gen` fails here.
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
// @ts-expect-error: plain .mjs build scripts without type declarations
import * as derived from '../../scripts/derived-files.mjs';
// @ts-expect-error: as above
import * as fastReader from '../../scripts/codegen/fast-reader.mjs';
// @ts-expect-error: as above
import * as robotView from '../../scripts/codegen/robot-view.mjs';
// @ts-expect-error: as above
import * as sampleEncoder from '../../scripts/codegen/sample-encoder.mjs';
import { RobotView } from '../../src/api/schemas/robots.js';
import { ByteWriter } from '../../src/telemetry/sample/byte-writer.js';
import { liveJsonPrefix, liveTree, NULLABLE_OBJECT, writeLiveJson } from '../../src/telemetry/sample/live-json.js';
import type { RowValues } from '../../src/telemetry/sample/row-values.js';
import { SAMPLE_FIELDS, type SampleField } from '../../src/telemetry/sample/sample-table.js';
import { samplesDdlFile } from '../../src/telemetry/store/samples-ddl.js';

const ROOT = join(import.meta.dirname, '..', '..');

type Region = (fields: readonly SampleField[], ...inputs: any[]) => string;
const derivedFiles = derived.derivedFiles as (root: string) => Promise<{ path: string; text: string }[]>;
const tableInputs = derived.tableInputs as () => Promise<{ sampleSchema: any }>;
const withRegion = derived.withRegion as (text: string, region: string, path: string) => string;
const fastReaderRegion = fastReader.fastReaderRegion as Region;
const robotViewRegion = robotView.robotViewRegion as Region;
const sampleEncoderRegion = sampleEncoder.sampleEncoderRegion as Region;

/** A row like the walk-through's, added last: TelemetrySample.health field 15 (a number no real field will take first). */
const PROBE: SampleField = {
  column: 'probe_temp_c', rowType: 'Float32', proto: [9, 15], protoType: 'float', live: 'health.probe_temp_c',
  snapshot: 'health.probeTempC', view: ['statusTelemetry.health.probeTempC'], agent: 'probeTempC', bound: null, modern: null,
};
const FIELDS = [...SAMPLE_FIELDS, PROBE];

/** TelemetrySample's descriptor as protobuf-es would have it after `npm run gen` with the new proto field. */
async function sampleSchemaWithProbe(): Promise<any> {
  const { sampleSchema } = await tableInputs();
  return {
    fields: sampleSchema.fields.map((f: any) => (f.number !== 9
      ? f
      : { number: f.number, localName: f.localName, message: { fields: [...f.message.fields, { number: 15, localName: 'probeTempC', name: 'probe_temp_c' }] } })),
  };
}

/** RobotView with the property the published schema gains (the one hand edit of the REST view). */
function robotViewWithProbe(): any {
  const view = structuredClone(RobotView) as any;
  const status = view.properties.statusTelemetry.anyOf.find((x: any) => x.type === 'object');
  status.properties.health.properties.probeTempC = Type.Number();
  return view;
}

describe('a telemetry field added to the table', () => {
  it('is a column of both DDL files, after the table\'s other columns', () => {
    expect(samplesDdlFile('modern', FIELDS)).toMatch(/load_weight_kg +Float32 CODEC\(Gorilla, ZSTD\(1\)\),\n +probe_temp_c +Float32 CODEC\(Gorilla, ZSTD\(1\)\)\n\)/);
    expect(samplesDdlFile('legacy', FIELDS)).toMatch(/load_weight_kg +Float32,\n +probe_temp_c +Float32\n\)/);
  });

  it('is read, written to the row and to the live message by the generated JS reader', async () => {
    const region = fastReaderRegion(FIELDS, await sampleSchemaWithProbe(), { liveTree, NULLABLE_OBJECT, NULL_WHEN_EMPTY: 'mission_run_id' });
    const readHealth = region.slice(region.indexOf('function readHealth'), region.indexOf('function readSample'));
    expect(readHealth).toContain('case 15: fl[F_PROBE_TEMP_C] = float(); break;');
    expect(region).toContain('  w.f32c(fl[F_LOAD_WEIGHT_KG]!);\n  w.f32c(fl[F_PROBE_TEMP_C]!);\n}');
    expect(region).toContain('w.ascii(\',"probe_temp_c":\');\n  num(w, fl[F_PROBE_TEMP_C]!);\n  w.ascii(\'},"map_id":\');');
  });

  it('is in the live message, inside its object', () => {
    const v: RowValues = Object.fromEntries(FIELDS.map((f) => [f.column, f.rowType === 'String' ? '' : f.rowType === 'Array(String)' ? [] : f.rowType === 'Int64' ? 0n : f.rowType === 'UInt8' ? false : 0]));
    v.probe_temp_c = 41.5;
    const w = new ByteWriter(1024);
    writeLiveJson(w, liveJsonPrefix('r', 'f'), v, liveTree(FIELDS));
    const msg = JSON.parse(new TextDecoder().decode(w.copyOut()));
    expect(msg.health).toEqual({ level: 'unspecified', faults: [], cpu_temp_c: 0, probe_temp_c: 41.5 });
  });

  it('is a SampleInput key and written by the agent\'s generated encoder', async () => {
    const region = sampleEncoderRegion(FIELDS, await sampleSchemaWithProbe());
    expect(region).toContain('  probeTempC: number;\n}');
    // health field 15, wire type 5 (fixed32): tag 0x7d, inside the health message.
    expect(region).toContain('  float(0x1d, (s.cpuTempC ?? 0));\n  float(0x7d, (s.probeTempC ?? 0));\n  closeMessage(mark);');
  });

  it('is shown in the REST view once the published schema has it, and names the schema when it has not', () => {
    expect(() => robotViewRegion(FIELDS, RobotView, NULLABLE_OBJECT)).toThrow(/no property for the view paths statusTelemetry\.health\.probeTempC/);
    const region = robotViewRegion(FIELDS, robotViewWithProbe(), NULLABLE_OBJECT);
    expect(region).toContain('        cpuTempC: snap.health.cpuTempC,\n        probeTempC: snap.health.probeTempC,\n');
  });
});

describe('the derived files', () => {
  it('are what `npm run gen` writes from the tables (a table row or declaration added without it fails here)', async () => {
    for (const { path, text } of await derivedFiles(ROOT)) expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(text);
  });

  it('keep their hand-written parts outside the generated region', () => {
    expect(() => withRegion('no markers', '', 'x.ts')).toThrow(/x\.ts: no generated region/);
  });
});
