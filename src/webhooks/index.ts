/** Alert webhooks: records, signing, delivery (queue, retries, dead letters) and management (docs/webhooks.md). */
export * from './records.js';
export * from './signing.js';
export * from './formats.js';
export * from './delivery.js';
export * from './service.js';
