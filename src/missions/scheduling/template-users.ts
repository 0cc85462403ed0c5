/**
 * What keeps a mission template from being deleted, answered by the modules that own those indexes:
 * a schedule referencing it (scheduling) or a run still executing it (runs). The catalog sits below
 * both, so its delete takes this as a parameter.
 */
import type { TemplateUsers } from '../catalog/templates.js';
import { activeRunOfTemplate } from '../runs/runs.js';
import type { Store } from '../../store/lmdb.js';
import { scheduleUsingTemplate } from './schedules.js';

/** The template users of one store (reads only; call inside the delete's transaction). */
export function templateUsers(store: Store): TemplateUsers {
  return {
    schedule: (missionId) => scheduleUsingTemplate(store, missionId),
    activeRun: (missionId) => activeRunOfTemplate(store, missionId),
  };
}
