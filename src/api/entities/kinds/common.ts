/** What the kind files share: the `kind` tag of items and the page size of every kind. */
import { Type } from '@sinclair/typebox';
import { Uuid } from '../../schemas/common.js';
import type { ListLimit } from '../../schemas/list.js';
import { SCHEDULE_STATES, type ScheduleState } from '../../schemas/mission-tools.js';
import type { KindName } from '../kind.js';

/** The `kind` field every item and detailed record carries (tells the items of a multi-kind answer apart). */
export const KindTag = <K extends KindName>(k: K) => Type.Literal(k);

/** Page size of every kind: `limit` (per kind with `kinds`). */
export const AGENT_LIST_LIMIT: ListLimit = { default: 100, max: 500 };

/**
 * Filters several kinds share: one schema each (the registry refuses two schemas under one filter
 * name). Their descriptions say what they select; the registry adds which kinds take them.
 */
export const CapabilityFilter = Type.String({ minLength: 1, maxLength: 64, description: 'Only robots advertising (robot) or templates requiring (mission_template) this capability.' });
export const RobotIdFilter = Uuid;
export const EnabledFilter = Type.Boolean({ description: 'Only enabled (true) or disabled (false) ones.' });
export const ScheduleStatusFilter = Type.Unsafe<ScheduleState>({
  type: 'string',
  enum: [...SCHEDULE_STATES],
  description: 'Only schedules in this state; without it every state (cancelled schedules are never listed).',
});
