/**
 * The MissionStart arguments a run was started with, read back for a robot link that rebuilds the
 * order it sent (src/missions/scheduling/run-start.ts): the start command's, else the template's while
 * it is unchanged since the run started, else unknown.
 */
import { describe, expect, it } from 'vitest';
import type { CommandRecord } from '../../src/commands/types.js';
import type { TemplateRecord } from '../../src/missions/catalog/records.js';
import type { RunRecord } from '../../src/missions/runs/records.js';
import { missionStartArgs, startedRunArgs } from '../../src/missions/scheduling/run-start.js';

const run = { runId: 'run-1', missionId: 'm-1', robotId: 'robot-1', startedAtMs: 1_000 } as RunRecord;
const template = (steps: Array<{ kind: string; config: Record<string, unknown> }>, updatedAtMs: number): TemplateRecord =>
  ({ missionId: 'm-1', name: 'line', featureId: null, parameters: {}, steps: steps.map((s, i) => ({ stepId: `s${i}`, ...s })), updatedAtMs }) as unknown as TemplateRecord;
const asSent = template([{ kind: 'drive_to', config: { x_m: 1, y_m: 2 } }, { kind: 'wait', config: {} }], 500);
const edited = template([{ kind: 'drive_to', config: { x_m: 9, y_m: 9 } }], 2_000);
const command = (args: unknown, robotId = 'robot-1'): CommandRecord => ({ commandId: 'c-1', robotId, action: 'mission_start', args }) as unknown as CommandRecord;

describe('startedRunArgs', () => {
  it('takes the start command\'s arguments: what was sent, also after the template was edited', () => {
    const sent = missionStartArgs(run, asSent);
    expect(startedRunArgs(run, command(sent), edited)).toEqual(sent);
  });

  it('rebuilds them from the template while it is unchanged since the run started', () => {
    expect(startedRunArgs(run, undefined, asSent)).toEqual(missionStartArgs(run, asSent));
    expect(startedRunArgs(run, undefined, asSent)?.steps).toEqual([{ kind: 'drive_to', config: { x_m: 1, y_m: 2 } }, { kind: 'wait', config: {} }]);
  });

  it('does not know them when the command is gone and the template changed since, or the command is another robot\'s or run\'s', () => {
    expect(startedRunArgs(run, undefined, edited)).toBeUndefined();
    expect(startedRunArgs(run, undefined, undefined)).toBeUndefined();
    expect(startedRunArgs(run, command(missionStartArgs(run, asSent), 'robot-2'), edited)).toBeUndefined();
    expect(startedRunArgs(run, command({ ...missionStartArgs(run, asSent), runId: 'run-2' }), edited)).toBeUndefined();
  });
});
