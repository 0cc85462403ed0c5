/**
 * Webhook records in LMDB. `webhooks` key: `<orgId>/<webhookId>` (an organization's webhooks are one
 * key range); `webhookDeadLetters` key: `<orgId>/<deadAtMs:12 hex>/<deadLetterId>` (oldest first per
 * organization, so the bound drops from the front). msgpack-safe only.
 *
 * The signing secret is stored as issued: the gateway needs it to sign every delivery, so unlike an
 * API key (checked against a digest) it cannot be kept as a hash. It is never returned after creation
 * and never logged; the URL may hold a token too (Slack), so views and logs show its origin only.
 */
import type { AlertKind } from '../fleet/safety/alerts/records.js';

/** Body formats a webhook can receive (docs/webhooks.md). */
export const WEBHOOK_FORMATS = ['fleetgw', 'slack', 'alertmanager', 'pagerduty'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface WebhookRecord {
  webhookId: string;
  orgId: string;
  name: string | null;
  /** The full URL, secret: shown only as its origin. */
  url: string;
  /** The HMAC-SHA256 signing secret (`whsec_…`), secret. */
  secret: string;
  format: WebhookFormat;
  /** PagerDuty Events v2 routing key (format `pagerduty` only), secret. */
  routingKey: string | null;
  /** Alert kinds delivered; null: every kind. */
  kinds: AlertKind[] | null;
  /** Attempts before a delivery is dead-lettered. */
  maxAttempts: number;
  /** Delay before the second attempt; doubles each attempt, with jitter, up to 5 min. */
  initialBackoffMs: number;
  /** Per-attempt timeout (connect to last byte of the answer's head). */
  timeoutMs: number;
  createdAtMs: number;
}

/** Why a delivery was given up. */
export type DeadLetterReason = 'attempts_exhausted' | 'queue_full' | 'gateway_stopped';

export interface DeadLetterRecord {
  deadLetterId: string;
  orgId: string;
  webhookId: string;
  /** The webhook URL's origin (scheme, host, port) at the time. */
  urlOrigin: string;
  alertId: string;
  alertKind: AlertKind;
  change: string;
  reason: DeadLetterReason;
  attempts: number;
  /** The last attempt's failure: HTTP status, timeout or network error (never the URL). */
  lastError: string | null;
  firstAttemptAtMs: number | null;
  deadAtMs: number;
  /** The body that would have been sent (JSON text), for a manual replay. */
  body: string;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../store/lmdb.js' {
  interface StoreDatabases {
    webhooks: WebhookRecord;
    webhookDeadLetters: DeadLetterRecord;
  }
}

/** Scheme, host and port of a URL: what logs and listings show of a webhook URL. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}
