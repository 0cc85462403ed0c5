/** Alert webhooks under /v1/orgs/{org_id}/webhooks (docs/webhooks.md). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

const ALERT_KIND = Type.Unsafe<'fault' | 'estop' | 'robot_offline' | 'battery_low' | 'schedule_failed' | 'command_retry_exhausted' | 'link_conflict'>({
  type: 'string', enum: ['fault', 'estop', 'robot_offline', 'battery_low', 'schedule_failed', 'command_retry_exhausted', 'link_conflict'],
});
const FORMAT = Type.Unsafe<'fleetgw' | 'slack' | 'alertmanager' | 'pagerduty'>({ type: 'string', enum: ['fleetgw', 'slack', 'alertmanager', 'pagerduty'] });

/** The create body's bound: its longest valid form (URL, routing key, name at their limits, every field escaped). */
export const WEBHOOK_BODY_MAX_BYTES = 32 * 1024;

export const WebhookOrgParams = Type.Object({ org_id: Uuid }, { additionalProperties: false });
export const WebhookPathParams = Type.Object({ org_id: Uuid, webhook_id: Uuid }, { additionalProperties: false });

export const WebhookCreateRequest = named('WebhookCreateRequest', Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Where deliveries are POSTed: https (plain http only to a loopback address). Treated as a secret: never shown again beyond its origin.' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    format: Type.Optional(FORMAT),
    pagerduty_routing_key: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The PagerDuty Events v2 integration key; required with format `pagerduty`. Never shown again.' })),
    kinds: Type.Optional(Type.Array(ALERT_KIND, { minItems: 1, maxItems: 7, uniqueItems: true, description: 'Alert kinds delivered; absent: every kind.' })),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'Attempts before a delivery is dead-lettered (default 8).' })),
    initial_backoff_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000, description: 'Wait before the second attempt; doubles each attempt with jitter, at most 5 min (default 5000).' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000, description: 'Per-attempt timeout (default 10000).' })),
  },
  { additionalProperties: false },
));
export type WebhookCreateRequest = Static<typeof WebhookCreateRequest>;

export const WebhookView = named('Webhook', Type.Object(
  {
    webhookId: Uuid,
    orgId: Uuid,
    name: Nullable(Type.String()),
    urlOrigin: Type.String({ description: 'Scheme, host and port of the URL; the rest may hold a token and is never shown.' }),
    format: FORMAT,
    kinds: Nullable(Type.Array(ALERT_KIND)),
    maxAttempts: Type.Integer(),
    initialBackoffMs: Type.Integer(),
    timeoutMs: Type.Integer(),
    createdAtMs: Type.Integer(),
  },
  { additionalProperties: false },
));
export type WebhookView = Static<typeof WebhookView>;

export const WebhookCreated = named('WebhookCreated', Type.Object(
  {
    webhook: WebhookView,
    signingSecret: Type.String({ description: 'The HMAC-SHA256 key of `X-Fleetgw-Signature` (docs/webhooks.md). Shown only in this response.' }),
  },
  { additionalProperties: false },
));
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookCreateReplay = named('WebhookCreateReplay', Type.Object(
  {
    webhook: WebhookView,
    secretWithheld: Type.Literal(true, { description: 'A replay: the webhook exists as created; its secret was shown once and is never shown again.' }),
  },
  { additionalProperties: false },
));
export type WebhookCreateReplay = Static<typeof WebhookCreateReplay>;

export const WEBHOOKS_LIMIT: ListLimit = { default: 20, max: 20 };
export const DEAD_LETTERS_LIMIT: ListLimit = { default: 100, max: 1000 };

export const WebhookListQuery = Type.Object({ limit: Type.Optional(LimitParam(WEBHOOKS_LIMIT)), cursor: Type.Optional(CursorParam()) }, { additionalProperties: false });
export type WebhookListQuery = Static<typeof WebhookListQuery>;
export const WebhookList = Page('WebhookList', WebhookView, 'By webhook id.');
export type WebhookList = Static<typeof WebhookList>;

export const DeadLetterQuery = Type.Object({ limit: Type.Optional(LimitParam(DEAD_LETTERS_LIMIT)), cursor: Type.Optional(CursorParam()) }, { additionalProperties: false });
export type DeadLetterQuery = Static<typeof DeadLetterQuery>;

export const DeadLetterView = named('WebhookDeadLetter', Type.Object(
  {
    deadLetterId: Uuid,
    webhookId: Uuid,
    urlOrigin: Type.String(),
    alertId: Uuid,
    alertKind: ALERT_KIND,
    change: Type.String({ description: '`opened`, `acknowledged` or `resolved`.' }),
    reason: Type.Unsafe<'attempts_exhausted' | 'queue_full' | 'gateway_stopped'>({ type: 'string', enum: ['attempts_exhausted', 'queue_full', 'gateway_stopped'] }),
    attempts: Type.Integer(),
    lastError: Nullable(Type.String({ description: 'The last attempt\'s failure: `HTTP <status>`, `timeout` or `network error <code>`.' })),
    firstAttemptAtMs: Nullable(Type.Integer()),
    deadAtMs: Type.Integer(),
    body: Type.String({ description: 'The JSON body that was to be delivered (unsigned: sign it again to replay it).' }),
  },
  { additionalProperties: false },
));
export type DeadLetterView = Static<typeof DeadLetterView>;
export const DeadLetterList = Page('WebhookDeadLetterList', DeadLetterView, 'Newest first.');
export type DeadLetterList = Static<typeof DeadLetterList>;
