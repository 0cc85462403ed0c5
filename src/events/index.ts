/** The correlated event log: append from any module, read one timeline (GET /v1/events). */
export { EventLog, MAX_TIMELINE_LIMIT, type TimelineOptions } from './log.js';
export { recordLinkConflicts } from './link-conflict.js';
