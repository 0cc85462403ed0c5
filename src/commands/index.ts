/** Robot commands: records, the LMDB outbox, delivery states and ack waits (see README.md). */
export {
  CommandService,
  createCommandService,
  type CommandServiceOptions,
  type CommandServiceStats,
  type SubmitRequest,
  type Submitted,
} from './service.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export { DEFAULT_OUTBOX_LIMITS, type OutboxLimits } from './outbox.js';
export { DEFAULT_MAX_WAITERS } from './waiters.js';
export {
  deliveryOf,
  isAcknowledged,
  URGENT_ACTIONS,
  type CommandAction,
  type CommandArgs,
  type CommandArgsByAction,
  type CommandRecord,
  type Delivery,
  type DeliveryState,
  type HistoryEntry,
  type StoredDeliveryState,
} from './types.js';
