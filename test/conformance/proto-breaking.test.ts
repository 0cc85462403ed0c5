/**
 * `npm run proto:breaking` (in .ci/run) keeps fleetgw.v1 growing only: `buf breaking` against the
 * committed baseline image (proto/baseline/v1.binpb) passes on proto/ as it is, and fails on a copy
 * with a field removed, a field renumbered or an RPC's streaming changed (as PublishTelemetry's once
 * was: docs/robot-link.md, "Versions").
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUF = join(ROOT, 'node_modules', '.bin', 'buf');
const BASELINE = join(ROOT, 'proto', 'baseline', 'v1.binpb');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * buf breaking on a copy of proto/ with `edit` applied to one file; returns its status and output.
 * An edit that changes nothing (its pattern no longer matches the file) fails the test: the case
 * would otherwise pass, or fail, for the wrong reason.
 */
function breaking(file: string, edit: ((text: string) => string) | null): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-buf-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'proto'), dir, { recursive: true });
  const path = join(dir, 'fleetgw', 'v1', file);
  const before = readFileSync(path, 'utf8');
  const after = edit === null ? before : edit(before);
  if (edit !== null) expect(after, `the edit of ${file} changed nothing`).not.toBe(before);
  writeFileSync(path, after);
  const r = spawnSync(BUF, ['breaking', dir, '--against', BASELINE], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('buf breaking against the committed baseline', () => {
  it('passes on proto/ as it is, and on an added field', () => {
    expect(breaking('telemetry.proto', null).status).toBe(0);
    const added = breaking('telemetry.proto', (t) => t.replace('  uint64 epoch = 3;\n}', '  uint64 epoch = 3;\n  uint32 agent_flags = 4;\n}'));
    expect(added.status, added.out).toBe(0);
  });

  it('fails on a removed field', () => {
    const r = breaking('telemetry.proto', (t) => t.replace('  uint64 epoch = 3;\n', ''));
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('Previously present field "3" with name "epoch" on message "TelemetryBatch" was deleted');
  });

  it('fails on a renumbered field', () => {
    const r = breaking('telemetry.proto', (t) => t.replace('  uint64 seq = 2;', '  uint64 seq = 5;'));
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/field "2" with name "seq" on message "TelemetryBatch" was deleted/);
  });

  it('fails on a changed streaming mode', () => {
    const r = breaking('robot_link.proto', (t) => t.replace('returns (stream TelemetryReceipt)', 'returns (TelemetryReceipt)'));
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('PublishTelemetry');
  });
});
