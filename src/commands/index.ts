/** Robot commands: records, policies, the LMDB outbox, delivery states, waits and audit (see README.md). */
export {
  CommandService,
  createCommandService,
  type CommandServiceOptions,
  type CommandServiceStats,
  type ResultWait,
  type SubmitRequest,
  type Submitted,
} from './service.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export { DEFAULT_OUTBOX_LIMITS, type OutboxLimits } from './outbox.js';
export { DEFAULT_MAX_WAITERS } from './waiters.js';
export { AuditIndex, DEFAULT_AUDIT_RETENTION, type AuditFilter, type AuditRetention } from './audit.js';
export { type CompiledPolicy } from './policy.js';
export { PolicyRegistry } from './policy-registry.js';
export { checkCommand, pointInRing } from './policy-check.js';
export { argsDigest, canonicalJson } from './digest.js';
export {
  COMMAND_ACTIONS,
  deliveryOf,
  expectsResult,
  isAcknowledged,
  isDeferrable,
  isUrgent,
  type ActionAndArgs,
  type CommandAction,
  type CommandArgs,
  type CommandArgsByAction,
  type CommandRecord,
  type CommandResultRecord,
  type Delivery,
  type DeliveryState,
  type HistoryEntry,
  type JsonObject,
  type JsonValue,
  type MissionControlVerb,
  type StoredDeliveryState,
} from './types.js';
