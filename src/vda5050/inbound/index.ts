/**
 * The VDA 5050 inbound gate: schema validation and the bad-input policy for messages robots publish
 * (connection, state, visualization, factsheet). See gate.ts and docs/vda5050.md, "Bad input".
 */
export { createInboundGate, DEFAULT_MAX_INBOUND_BYTES, DEFAULT_MAX_ORDERED_ROBOTS } from './gate.js';
export type { InboundGate, InboundGateOptions, InboundGateStats, ValidatedMessage } from './gate.js';
export { REJECT_REASONS, type RejectReason } from './reasons.js';
export { REJECT_LOG_WINDOW_MS, type InboundLog } from './rejection-log.js';
export { INBOUND_SCHEMAS, INBOUND_TOPICS, inboundValidators, type InboundMessages, type InboundTopic } from './validators.js';
export { CONNECTION_STATES, type Vda5050Connection } from './connection-schema.js';
export type { Vda5050State } from './state-schema.js';
export type { Vda5050Visualization } from './visualization-schema.js';
export type { Vda5050Factsheet } from './factsheet-schema.js';
