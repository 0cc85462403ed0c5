/**
 * What a mission run was started with: the MissionStart arguments the dispatcher submits for a run,
 * and the same arguments read back later for a robot link that must rebuild the order it sent for
 * the run (VDA 5050 master control after a gateway restart, docs/vda5050.md).
 */
import type { CommandArgsByAction } from '../../commands/catalog/index.js';
import type { CommandRecord, JsonObject } from '../../commands/types.js';
import type { TemplateRecord } from '../catalog/records.js';
import type { RunRecord } from '../runs/records.js';

/** The arguments of a `mission_start` command. */
export type MissionStartArgs = CommandArgsByAction['mission_start'];

/** The MissionStart arguments of `run` from template `t`: what the dispatcher submits. */
export function missionStartArgs(run: RunRecord, t: TemplateRecord): MissionStartArgs {
  return {
    runId: run.runId,
    missionId: t.missionId,
    name: t.name,
    steps: t.steps.map((st) => ({ kind: st.kind, config: st.config as JsonObject })),
    parameters: t.parameters as JsonObject,
    featureId: t.featureId,
  };
}

/**
 * The MissionStart arguments `run` was started with: those of `start`, its MissionStart command's
 * record, while the command service keeps it (exactly what was sent); else rebuilt from `template`
 * when the template has not changed since the run started. Undefined otherwise: a run's steps are
 * fixed when it is dispatched, and a template edited since may no longer have them.
 */
export function startedRunArgs(run: RunRecord, start: CommandRecord | undefined, template: TemplateRecord | undefined): MissionStartArgs | undefined {
  if (start !== undefined && start.action === 'mission_start' && start.robotId === run.robotId) {
    const args = start.args as MissionStartArgs;
    if (args.runId === run.runId) return args;
  }
  if (template !== undefined && template.missionId === run.missionId && template.updatedAtMs < run.startedAtMs) return missionStartArgs(run, template);
  return undefined;
}
