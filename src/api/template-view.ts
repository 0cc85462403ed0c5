/** The public view of a mission template, shared by the template routes and control-operation. */
import type { TemplateRecord } from '../missions/catalog/records.js';
import type { TemplateView } from './schemas/templates.js';

/** The public view of a template. */
export function templateView(t: TemplateRecord): TemplateView {
  return {
    missionId: t.missionId,
    name: t.name,
    featureId: t.featureId,
    enabled: t.enabled,
    capabilities: t.capabilities,
    roster: t.roster,
    steps: t.steps,
    parameters: t.parameters,
    prerequisites: t.prerequisites,
    priority: t.priority,
    version: t.version,
    createdAtMs: t.createdAtMs,
    updatedAtMs: t.updatedAtMs,
  };
}
