/**
 * Alert delivery to webhooks. Each alert change is turned into one job per matching webhook of its
 * organization and queued; a small pool of concurrent attempts sends them with fetch (undici), each
 * with a timeout. A failed attempt (non-2xx, timeout, network error) is retried after an exponential
 * backoff with jitter until the webhook's `maxAttempts`, then the job goes to the organization's
 * dead-letter list. Nothing here waits on the network in the event loop: attempts are promises and
 * retries timers, so an unreachable receiver costs one pending socket per attempt, never a stall.
 *
 * Bounds, and what happens at each:
 * - per organization at most `maxQueuedPerOrg` jobs (queued, in flight or waiting to retry); a job
 *   past it is not queued: it is dead-lettered at once (`queue_full`) and counted;
 * - per organization at most `maxDeadLettersPerOrg` dead letters in LMDB; the oldest is dropped and
 *   counted (`fleetgw_webhook_dead_letters_dropped_total`);
 * - at most `concurrency` attempts in flight in all.
 * On close, every job not yet delivered is dead-lettered (`gateway_stopped`): nothing disappears unseen.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pino } from 'pino';
import type { AlertChange } from '../fleet/safety/alerts/alert-service.js';
import type { AlertRecord } from '../fleet/safety/alerts/records.js';
import type { Store } from '../store/lmdb.js';
import { deliveryBody, DELIVERED_CHANGES } from './formats.js';
import { deadLetterKey, webhookKey } from './keys.js';
import { urlOrigin, type DeadLetterReason, type DeadLetterRecord } from './records.js';
import { SIGNATURE_HEADER, signDelivery, TIMESTAMP_HEADER } from './signing.js';

/** Delivery outcomes, the label values of `fleetgw_webhook_deliveries_total` (all present from zero). */
export const DELIVERY_OUTCOMES = ['delivered', 'retried', 'dead_lettered', 'queue_full', 'webhook_removed'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export interface WebhookDeliveryOptions {
  store: Store;
  log?: Logger;
  /** Default 1000 jobs per organization. */
  maxQueuedPerOrg?: number;
  /** Default 1000 dead letters per organization. */
  maxDeadLettersPerOrg?: number;
  /** Attempts in flight at once, all organizations (default 16). */
  concurrency?: number;
  now?: () => number;
}

/** Longest wait between two attempts. */
export const MAX_BACKOFF_MS = 300_000;

interface Job {
  key: string;
  orgId: string;
  webhookId: string;
  alertId: string;
  alertKind: AlertRecord['kind'];
  change: AlertChange;
  deliveryId: string;
  body: string;
  attempts: number;
  firstAttemptAtMs: number | null;
  lastError: string | null;
  timer: NodeJS.Timeout | null;
}

/** Counters of the delivery path (metrics read them at scrape time). */
export interface WebhookDeliveryStats {
  outcomes: Record<DeliveryOutcome, number>;
  queued: number;
  deadLettersDropped: number;
}

export class WebhookDelivery {
  private readonly store: Store;
  private readonly log: Logger;
  private readonly maxQueued: number;
  private readonly maxDead: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly ready: Job[] = [];
  private readonly waiting = new Set<Job>();
  private readonly sending = new Set<Job>();
  private readonly perOrg = new Map<string, number>();
  private readonly deadCount = new Map<string, number>();
  private inFlight = 0;
  private closed = false;
  private readonly outcomes: Record<DeliveryOutcome, number> = { delivered: 0, retried: 0, dead_lettered: 0, queue_full: 0, webhook_removed: 0 };
  private deadDropped = 0;
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(opts: WebhookDeliveryOptions) {
    this.store = opts.store;
    this.log = opts.log ?? pino({ enabled: false });
    this.maxQueued = opts.maxQueuedPerOrg ?? 1000;
    this.maxDead = opts.maxDeadLettersPerOrg ?? 1000;
    this.concurrency = opts.concurrency ?? 16;
    this.now = opts.now ?? ((): number => Date.now());
  }

  /** The alert service's observer: queues one job per webhook of the alert's organization that wants it. */
  onAlert(alert: Readonly<AlertRecord>, change: AlertChange): void {
    if (this.closed || !DELIVERED_CHANGES.has(change)) return;
    const prefix = `${alert.orgId}/`;
    // A memory-mapped range read of the organization's few webhooks: admin changes apply at once.
    for (const { value: hook } of this.store.webhooks.getRange({ start: prefix, end: `${prefix}\xff` })) {
      if (hook.kinds !== null && !hook.kinds.includes(alert.kind)) continue;
      const deliveryId = randomUUID();
      const job: Job = {
        key: webhookKey(hook.orgId, hook.webhookId), orgId: hook.orgId, webhookId: hook.webhookId, alertId: alert.alertId, alertKind: alert.kind,
        change, deliveryId, body: deliveryBody(hook, alert, change, deliveryId, this.now()), attempts: 0, firstAttemptAtMs: null, lastError: null, timer: null,
      };
      const queued = this.perOrg.get(hook.orgId) ?? 0;
      if (queued >= this.maxQueued) {
        this.count('queue_full');
        this.deadLetter(job, hook.url, 'queue_full');
        continue;
      }
      this.perOrg.set(hook.orgId, queued + 1);
      this.ready.push(job);
    }
    this.pump();
  }

  stats(): WebhookDeliveryStats {
    let queued = 0;
    for (const n of this.perOrg.values()) queued += n;
    return { outcomes: { ...this.outcomes }, queued, deadLettersDropped: this.deadDropped };
  }

  /** Stops sending; jobs not delivered are dead-lettered (`gateway_stopped`). Waits for the writes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.waiting) if (job.timer) clearTimeout(job.timer);
    // An attempt in flight may still reach its receiver: its dead letter then stands for "maybe delivered".
    const left = [...this.ready, ...this.waiting, ...this.sending];
    this.ready.length = 0;
    this.waiting.clear();
    for (const job of left) {
      const hook = this.store.webhooks.get(job.key);
      this.deadLetter(job, hook?.url ?? '', 'gateway_stopped');
    }
    await this.lastWrite;
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.concurrency && this.ready.length > 0) {
      const job = this.ready.shift()!;
      this.inFlight++;
      this.sending.add(job);
      void this.attempt(job).finally(() => {
        this.sending.delete(job);
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async attempt(job: Job): Promise<void> {
    const hook = this.store.webhooks.get(job.key);
    if (hook === undefined) {
      this.done(job);
      this.count('webhook_removed');
      return;
    }
    job.attempts++;
    const startedAt = this.now();
    job.firstAttemptAtMs ??= startedAt;
    const ts = Math.floor(startedAt / 1000);
    let error: string | null = null;
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        body: job.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(hook.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'fleetgw-webhooks',
          [TIMESTAMP_HEADER]: String(ts),
          [SIGNATURE_HEADER]: signDelivery(hook.secret, ts, job.body),
          'x-fleetgw-webhook-id': hook.webhookId,
          'x-fleetgw-delivery-id': job.deliveryId,
        },
      });
      // The answer's body is not used; reading it to the end frees the connection for reuse.
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err: unknown) {
      error = describe(err);
    }
    if (this.closed) return;
    if (error === null) {
      this.done(job);
      this.count('delivered');
      return;
    }
    job.lastError = error;
    if (job.attempts >= hook.maxAttempts) {
      this.done(job);
      this.count('dead_lettered');
      this.log.warn({ webhookId: hook.webhookId, orgId: hook.orgId, url: urlOrigin(hook.url), alertId: job.alertId, attempts: job.attempts, error }, 'webhook delivery dead-lettered');
      this.deadLetter(job, hook.url, 'attempts_exhausted');
      return;
    }
    this.count('retried');
    const delay = backoffMs(hook.initialBackoffMs, job.attempts);
    this.log.info({ webhookId: hook.webhookId, url: urlOrigin(hook.url), alertId: job.alertId, attempt: job.attempts, error, retryInMs: delay }, 'webhook delivery failed; retrying');
    this.waiting.add(job);
    job.timer = setTimeout(() => {
      job.timer = null;
      this.waiting.delete(job);
      if (this.closed) return;
      this.ready.push(job);
      this.pump();
    }, delay);
  }

  private done(job: Job): void {
    const n = (this.perOrg.get(job.orgId) ?? 1) - 1;
    if (n <= 0) this.perOrg.delete(job.orgId);
    else this.perOrg.set(job.orgId, n);
  }

  private count(outcome: DeliveryOutcome): void {
    this.outcomes[outcome]++;
  }

  /** Writes a dead letter and drops the organization's oldest beyond the bound (asynchronous writes, in order). */
  private deadLetter(job: Job, url: string, reason: DeadLetterReason): void {
    const deadAtMs = this.now();
    const rec: DeadLetterRecord = {
      deadLetterId: randomUUID(), orgId: job.orgId, webhookId: job.webhookId, urlOrigin: urlOrigin(url), alertId: job.alertId, alertKind: job.alertKind,
      change: job.change, reason, attempts: job.attempts, lastError: job.lastError, firstAttemptAtMs: job.firstAttemptAtMs, deadAtMs, body: job.body,
    };
    const prefix = `${job.orgId}/`;
    let count = this.deadCount.get(job.orgId);
    count ??= this.store.webhookDeadLetters.getKeysCount({ start: prefix, end: `${prefix}\xff` });
    const drop: string[] = [];
    if (count >= this.maxDead) {
      for (const key of this.store.webhookDeadLetters.getKeys({ start: prefix, end: `${prefix}\xff`, limit: count - this.maxDead + 1 })) drop.push(key);
    }
    this.deadCount.set(job.orgId, count + 1 - drop.length);
    this.deadDropped += drop.length;
    const write = this.store.root.transaction(() => {
      for (const key of drop) this.store.webhookDeadLetters.removeSync(key);
      this.store.webhookDeadLetters.putSync(deadLetterKey(rec), rec);
    });
    this.lastWrite = write.catch((err: unknown) => this.log.error({ err, orgId: job.orgId, webhookId: job.webhookId }, 'webhook dead letter not written'));
  }
}

/**
 * The wait after failed attempt `attempt` (1-based): `initial * 2^(attempt-1)`, capped at
 * MAX_BACKOFF_MS, with "equal jitter" (a random point in its upper half) so many webhooks failing
 * together do not retry in lockstep.
 */
export function backoffMs(initialMs: number, attempt: number): number {
  const base = Math.min(MAX_BACKOFF_MS, initialMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** A failure in words, never with the URL (it may hold a token). */
function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timeout';
    const cause = (err as { cause?: { code?: unknown } }).cause;
    if (cause && typeof cause.code === 'string') return `network error ${cause.code}`;
    return 'network error';
  }
  return 'network error';
}
