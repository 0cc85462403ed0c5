/** Bound queries: placeholder checks, the external-data form for ClickHouse servers, TSV both ways. */
import { describe, expect, it } from 'vitest';
import { checkBoundQuery, externalDataSql, externalDataTable, parseTabSeparated } from '../../src/telemetry/store/bound-query.js';

describe('bound queries', () => {
  const q = {
    sql: 'SELECT 1 WHERE a = {fleet_id:String} AND b < {to_ms:Int64} AND has({ids:Array(String)}, c)',
    params: {
      fleet_id: { type: 'String' as const, value: "x'\t\\y\n" },
      to_ms: { type: 'Int64' as const, value: 12 },
      ids: { type: 'Array(String)' as const, value: ["it's", 'b'] },
    },
  };

  it('refuses a missing, mistyped or unused parameter and unsafe integers', () => {
    expect(() => checkBoundQuery(q)).not.toThrow();
    expect(() => checkBoundQuery({ ...q, params: { ...q.params, extra: { type: 'Int64', value: 1 } } })).toThrow(/extra is not used/);
    expect(() => checkBoundQuery({ sql: q.sql, params: { ...q.params, to_ms: { type: 'String', value: '1' } } })).toThrow(/to_ms is String/);
    expect(() => checkBoundQuery({ sql: 'SELECT {n:Int64}', params: { n: { type: 'Int64', value: 2 ** 60 } } })).toThrow(/safe integers/);
    expect(() => checkBoundQuery({ sql: 'SELECT {n:Int64}', params: {} })).toThrow(/n is not given/);
  });

  it('reads every placeholder from the one-row external table, values escaped in its row only', () => {
    expect(externalDataSql(q)).toBe('SELECT 1 WHERE a = (SELECT fleet_id FROM fleetgw_params) AND b < (SELECT to_ms FROM fleetgw_params) AND has((SELECT ids FROM fleetgw_params), c)');
    expect(externalDataTable(q)).toEqual({
      structure: 'fleet_id String, to_ms Int64, ids Array(String)',
      row: "x\\'\\t\\\\y\\n\t12\t['it\\'s','b']\n",
    });
  });

  it('parses TabSeparated output with escapes', () => {
    expect(parseTabSeparated('a\\tb\t1\nc\\\\d\t2\n')).toEqual([['a\tb', '1'], ['c\\d', '2']]);
  });
});
