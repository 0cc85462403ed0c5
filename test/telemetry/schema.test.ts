/** The DDL files and the row encoders agree on the columns; version -> flavor rules. */
import { describe, expect, it } from 'vitest';
import { INSERT_COLUMNS, ROWBINARY_STRUCTURE, ROWBINARY_TYPES } from '../../src/telemetry/store/columns.js';
import { flavorForVersion, loadSamplesDdl } from '../../src/telemetry/store/schema.js';

function columnsOf(ddl: string): string[] {
  const body = ddl.slice(ddl.indexOf('(') + 1, ddl.indexOf('\n)'));
  return body.split('\n').map((l) => l.trim().split(/\s+/)[0] ?? '').filter((n) => /^[a-z_]+$/.test(n));
}

describe('telemetry_samples schema', () => {
  it.each(['modern', 'legacy'] as const)('%s DDL has exactly the insert columns plus the computed ts', async (flavor) => {
    const ddl = await loadSamplesDdl(flavor, 30);
    const cols = columnsOf(ddl);
    expect(cols.filter((c) => c !== 'ts')).toEqual([...INSERT_COLUMNS]);
    expect(cols).toContain('ts');
    expect(ddl).not.toContain('--');
    if (flavor === 'modern') expect(ddl).toContain('INTERVAL 30 DAY');
    else expect(ddl).not.toMatch(/DateTime64|CODEC|LowCardinality|TTL/);
  });

  it('the RowBinary structure (chdb file() inserts) names every insert column with its modern DDL type', async () => {
    const ddl = await loadSamplesDdl('modern', 30);
    expect(Object.keys(ROWBINARY_TYPES)).toEqual([...INSERT_COLUMNS]);
    for (const col of INSERT_COLUMNS) {
      const line = ddl.split('\n').find((l) => l.trim().split(/\s+/)[0] === col)!;
      // The DDL type with LowCardinality (a storage detail) removed, before any DEFAULT/CODEC clause.
      const type = line.trim().slice(col.length).trim().split(/ (?:DEFAULT|CODEC)/)[0]!.replace(/,$/, '');
      expect(type.replace(/LowCardinality\((\w+)\)/g, '$1')).toBe(ROWBINARY_TYPES[col]);
    }
    expect(ROWBINARY_STRUCTURE.startsWith('robot_id String, fleet_id String, ts_ms Int64,')).toBe(true);
  });

  it('the legacy DDL types are the RowBinary types of the field table', async () => {
    const ddl = await loadSamplesDdl('legacy', 30);
    for (const col of INSERT_COLUMNS) {
      const line = ddl.split('\n').find((l) => l.trim().split(/\s+/)[0] === col)!;
      const type = line.trim().slice(col.length).trim().split(/ (?:DEFAULT|CODEC)/)[0]!.replace(/,$/, '');
      expect(type, col).toBe(ROWBINARY_TYPES[col]);
    }
  });

  it('uses the legacy table before 21.x and the modern one after', () => {
    expect(flavorForVersion('18.16.1')).toBe('legacy');
    expect(flavorForVersion('20.3.4.1')).toBe('legacy');
    expect(flavorForVersion('21.8.15.7')).toBe('modern');
    expect(flavorForVersion('24.8.4.13')).toBe('modern');
    expect(flavorForVersion('garbage')).toBe('legacy');
  });
});
