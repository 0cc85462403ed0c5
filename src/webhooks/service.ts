/**
 * Webhook management, shared by the REST routes and `fleetgw admin webhooks`: create (the secret is
 * generated here and returned once), list, remove, and the dead-letter list. Views never carry the
 * secret, the PagerDuty routing key or the URL beyond its origin.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { ALERT_KINDS, type AlertKind } from '../fleet/safety/alerts/records.js';
import { keysetOver, type Keyset } from '../store/keyset.js';
import type { Store } from '../store/lmdb.js';
import { webhookKey } from './keys.js';
import { urlOrigin, WEBHOOK_FORMATS, type DeadLetterRecord, type WebhookFormat, type WebhookRecord } from './records.js';
import { newSigningSecret } from './signing.js';

/** Webhooks per organization. */
export const MAX_WEBHOOKS_PER_ORG = 20;
export const DEFAULT_MAX_ATTEMPTS = 8;
export const DEFAULT_INITIAL_BACKOFF_MS = 5_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface WebhookInput {
  url: string;
  name?: string | null;
  format?: WebhookFormat;
  routingKey?: string | null;
  kinds?: AlertKind[] | null;
  maxAttempts?: number;
  initialBackoffMs?: number;
  timeoutMs?: number;
}

/** What listings show of a webhook. */
export interface WebhookView {
  webhookId: string;
  orgId: string;
  name: string | null;
  /** Scheme, host and port only: the path may hold a token (Slack). */
  urlOrigin: string;
  format: WebhookFormat;
  kinds: AlertKind[] | null;
  maxAttempts: number;
  initialBackoffMs: number;
  timeoutMs: number;
  createdAtMs: number;
}

/** A rule the input broke, naming the field. */
export class WebhookInputError extends Error {
  constructor(readonly field: string, detail: string) {
    super(`${field}: ${detail}`);
  }
}

export function webhookView(w: WebhookRecord): WebhookView {
  return {
    webhookId: w.webhookId, orgId: w.orgId, name: w.name, urlOrigin: urlOrigin(w.url), format: w.format, kinds: w.kinds === null ? null : [...w.kinds],
    maxAttempts: w.maxAttempts, initialBackoffMs: w.initialBackoffMs, timeoutMs: w.timeoutMs, createdAtMs: w.createdAtMs,
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopback(hostname: string): boolean {
  if (LOOPBACK_NAMES.has(hostname)) return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

/** Checks the input and fills the defaults; throws WebhookInputError naming the field. */
export function checkWebhookInput(input: WebhookInput): Required<WebhookInput> {
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new WebhookInputError('url', 'not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookInputError('url', 'must be https (or http to a loopback address)');
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) throw new WebhookInputError('url', 'plain http is accepted only for loopback receivers; use https');
  if (url.username !== '' || url.password !== '') throw new WebhookInputError('url', 'must not carry credentials (user:password@)');
  const format = input.format ?? 'fleetgw';
  if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw new WebhookInputError('format', `must be one of ${WEBHOOK_FORMATS.join(', ')}`);
  const routingKey = input.routingKey ?? null;
  if (format === 'pagerduty' && (routingKey === null || routingKey === '')) throw new WebhookInputError('pagerduty_routing_key', 'required with format pagerduty');
  if (format !== 'pagerduty' && routingKey !== null) throw new WebhookInputError('pagerduty_routing_key', 'only with format pagerduty');
  const kinds = input.kinds ?? null;
  if (kinds !== null) {
    if (kinds.length === 0) throw new WebhookInputError('kinds', 'must name at least one alert kind (omit it for every kind)');
    for (const k of kinds) if (!(ALERT_KINDS as readonly string[]).includes(k)) throw new WebhookInputError('kinds', `unknown alert kind '${k}'`);
  }
  const int = (field: string, v: number | undefined, dflt: number, min: number, max: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isInteger(v) || v < min || v > max) throw new WebhookInputError(field, `must be a whole number from ${min} to ${max}`);
    return v;
  };
  return {
    url: input.url,
    name: input.name ?? null,
    format,
    routingKey,
    kinds: kinds === null ? null : [...new Set(kinds)],
    maxAttempts: int('max_attempts', input.maxAttempts, DEFAULT_MAX_ATTEMPTS, 1, 20),
    initialBackoffMs: int('initial_backoff_ms', input.initialBackoffMs, DEFAULT_INITIAL_BACKOFF_MS, 10, 600_000),
    timeoutMs: int('timeout_ms', input.timeoutMs, DEFAULT_TIMEOUT_MS, 100, 60_000),
  };
}

/** The organization's webhooks, oldest key first. */
export function orgWebhooks(store: Store, orgId: string): WebhookRecord[] {
  const prefix = `${orgId}/`;
  return [...store.webhooks.getRange({ start: prefix, end: `${prefix}\xff` })].map((e) => e.value).sort((a, b) => a.createdAtMs - b.createdAtMs);
}

/**
 * Makes a webhook record and its signing secret (the only time the secret is handed out); the caller
 * writes the record (REST: in one transaction with the idempotency reply).
 */
export function newWebhook(store: Store, orgId: string, input: WebhookInput, nowMs: number): { record: WebhookRecord; secret: string } {
  const c = checkWebhookInput(input);
  if (orgWebhooks(store, orgId).length >= MAX_WEBHOOKS_PER_ORG) throw new WebhookInputError('url', `the organization already has ${MAX_WEBHOOKS_PER_ORG} webhooks (the most it may have)`);
  const secret = newSigningSecret();
  const record: WebhookRecord = { webhookId: randomUUID(), orgId, ...c, secret, createdAtMs: nowMs };
  return { record, secret };
}

/** Writes a new webhook record inside the caller's LMDB transaction (REST: with its idempotency reply). */
export function putWebhookInTxn(store: Store, record: WebhookRecord): void {
  store.webhooks.putSync(webhookKey(record.orgId, record.webhookId), record);
}

/** Writes a new webhook record; resolves once committed. */
export async function saveWebhook(store: Store, record: WebhookRecord): Promise<void> {
  await store.webhooks.put(webhookKey(record.orgId, record.webhookId), record);
}

/** Removes a webhook; false when the organization has none with that id. Queued deliveries to it are dropped. */
export async function removeWebhook(store: Store, orgId: string, webhookId: string): Promise<boolean> {
  const key = webhookKey(orgId, webhookId);
  if (store.webhooks.get(key) === undefined) return false;
  return store.webhooks.remove(key);
}

/** The organization's dead letters, newest first, at most `limit`. */
export function orgDeadLetters(store: Store, orgId: string, limit: number): DeadLetterRecord[] {
  const prefix = `${orgId}/`;
  return [...store.webhookDeadLetters.getRange({ start: `${prefix}\xff`, end: prefix, reverse: true, limit })].map((e) => e.value);
}

/** The organization's webhooks as a keyset (REST list, by webhook id). */
export function orgWebhookKeyset(store: Store, orgId: string): Keyset<WebhookRecord> {
  return keysetOver(store.webhooks, { prefix: `${orgId}/` }, (_key, value) => value);
}

/** The organization's dead letters as a keyset, newest first. */
export function orgDeadLetterKeyset(store: Store, orgId: string): Keyset<DeadLetterRecord> {
  return keysetOver(store.webhookDeadLetters, { prefix: `${orgId}/`, reverse: true }, (_key, value) => value);
}
