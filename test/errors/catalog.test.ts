import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiError, ERROR_CATALOG } from '../../src/errors/catalog.js';

// docs/errors.md is the human-facing copy of the catalog; this keeps the two identical.
const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map<string, { status: number; code: string; template: string }>();
for (const line of doc.split('\n')) {
  const m = /^\| `([a-z_]+)` \| (\d{3}) \| `([a-z_]+)` \| (.*) \|$/.exec(line);
  if (m) rows.set(m[1] ?? '', { status: Number(m[2]), code: m[3] ?? '', template: (m[4] ?? '').replaceAll('\\|', '|') });
}

// The spec's machine codes and the statuses it pairs them with (Errors section).
const SPEC_CODES = new Set(['bad_request', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'partial_failure', 'policy_rejected', 'rate_limited', 'internal', 'unavailable']);

describe('error catalog', () => {
  it('docs/errors.md lists exactly the catalog, entry for entry', () => {
    const catalog = Object.entries(ERROR_CATALOG).map(([id, e]) => [id, { status: e.status, code: e.code, template: e.template }]);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(catalog));
  });

  it('uses only the spec codes', () => {
    for (const e of Object.values(ERROR_CATALOG)) expect(SPEC_CODES.has(e.code)).toBe(true);
  });

  it('builds the spec error body from a template', () => {
    const err = apiError('robot_not_found', { robotId: 'abc' });
    expect(err.status).toBe(404);
    expect(err.toBody()).toEqual({ error: 'Robot abc was not found.', code: 'not_found' });
  });
});
