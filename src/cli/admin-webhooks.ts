/**
 * `fleetgw admin webhooks add | list | remove | dead-letters` (docs/webhooks.md): alert webhooks of an
 * organization, straight against the data dir's LMDB like the other admin commands (a running server
 * sees a change on its next alert). `add` prints the signing secret once; nothing prints it again, nor
 * the URL beyond its origin (it may hold a token), nor a PagerDuty routing key.
 * The URL and the routing key can come from files (`--url-file`, `--pagerduty-routing-key-file`): a
 * command line is visible to every user of the host.
 */
import { readFileSync } from 'node:fs';
import { ALERT_KINDS, type AlertKind } from '../fleet/safety/alerts/records.js';
import type { Store } from '../store/lmdb.js';
import { newWebhook, orgDeadLetters, orgWebhooks, removeWebhook, saveWebhook, webhookView, WebhookInputError, WEBHOOK_FORMATS, type WebhookFormat } from '../webhooks/index.js';
import { list, opt, parseStrict, positiveInt, req, reqUuid } from './args.js';
import { UsageError } from './usage.js';
import { orgRecord } from '../store/identity-reads.js';

type Out = (line: string) => void;
type WithStore = <T>(dataDir: string, fn: (store: Store) => T | Promise<T>) => Promise<T>;

function fileLine(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err: unknown) {
    throw new UsageError(`cannot read ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

function intOpt(v: Record<string, string | boolean | undefined>, name: string): number | undefined {
  return positiveInt(opt(v, name), name);
}

/** Runs one `webhooks` subcommand; returns the exit code. */
export async function runAdminWebhooks(argv: string[], out: Out, withStore: WithStore): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'add': {
      const v = parseStrict(rest, {
        'data-dir': { type: 'string' }, org: { type: 'string' }, url: { type: 'string' }, 'url-file': { type: 'string' }, name: { type: 'string' },
        format: { type: 'string' }, kinds: { type: 'string' }, 'pagerduty-routing-key-file': { type: 'string' }, 'max-attempts': { type: 'string' },
        'initial-backoff-ms': { type: 'string' }, 'timeout-ms': { type: 'string' }, json: { type: 'boolean' },
      });
      const dataDir = req(v, 'data-dir');
      const orgId = reqUuid(v, 'org');
      const urlFlag = opt(v, 'url');
      const urlFile = opt(v, 'url-file');
      if ((urlFlag === undefined) === (urlFile === undefined)) throw new UsageError('give the webhook URL with exactly one of --url or --url-file');
      const url = urlFlag ?? fileLine(urlFile!, 'URL');
      const format = opt(v, 'format') ?? 'fleetgw';
      if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${WEBHOOK_FORMATS.join(', ')}`);
      const kindsOpt = opt(v, 'kinds');
      const kinds = kindsOpt === undefined ? null : list(kindsOpt);
      for (const k of kinds ?? []) if (!(ALERT_KINDS as readonly string[]).includes(k)) throw new UsageError(`--kinds: unknown alert kind '${k}' (one of ${ALERT_KINDS.join(', ')})`);
      const keyFile = opt(v, 'pagerduty-routing-key-file');
      const maxAttempts = intOpt(v, 'max-attempts');
      const initialBackoffMs = intOpt(v, 'initial-backoff-ms');
      const timeoutMs = intOpt(v, 'timeout-ms');
      const made = await withStore(dataDir, async (store) => {
        if (orgRecord(store, orgId) === undefined) throw new UsageError(`organization ${orgId} does not exist`);
        let m;
        try {
          m = newWebhook(store, orgId, {
            url, name: opt(v, 'name') ?? null, format: format as WebhookFormat, routingKey: keyFile === undefined ? null : fileLine(keyFile, 'routing key'),
            kinds: kinds as AlertKind[] | null,
            ...(maxAttempts !== undefined ? { maxAttempts } : {}), ...(initialBackoffMs !== undefined ? { initialBackoffMs } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          }, Date.now());
        } catch (err: unknown) {
          if (err instanceof WebhookInputError) throw new UsageError(`--${err.field.replace(/_/g, '-')}: ${err.message.slice(err.field.length + 2)}`);
          throw err;
        }
        await saveWebhook(store, m.record);
        return m;
      });
      const view = webhookView(made.record);
      out(v.json === true ? JSON.stringify({ webhook: view, signingSecret: made.secret })
        : `webhook ${view.webhookId}\nurl ${view.urlOrigin}/…\nformat ${view.format}\nsigning secret ${made.secret}  (shown once)`);
      return 0;
    }
    case 'list': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, org: { type: 'string' }, json: { type: 'boolean' } });
      const orgId = reqUuid(v, 'org');
      const views = await withStore(req(v, 'data-dir'), (store) => orgWebhooks(store, orgId).map(webhookView));
      if (v.json === true) out(JSON.stringify({ webhooks: views }));
      else {
        out('webhookId\tname\turl\tformat\tkinds\tmaxAttempts');
        for (const w of views) out([w.webhookId, w.name ?? '', w.urlOrigin, w.format, w.kinds?.join(',') ?? 'all', String(w.maxAttempts)].join('\t'));
      }
      return 0;
    }
    case 'remove': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, org: { type: 'string' }, 'webhook-id': { type: 'string' }, json: { type: 'boolean' } });
      const orgId = reqUuid(v, 'org');
      const webhookId = reqUuid(v, 'webhook-id');
      const removed = await withStore(req(v, 'data-dir'), (store) => removeWebhook(store, orgId, webhookId));
      if (!removed) throw new UsageError(`organization ${orgId} has no webhook ${webhookId}`);
      out(v.json === true ? JSON.stringify({ removed: webhookId }) : `removed webhook ${webhookId}`);
      return 0;
    }
    case 'dead-letters': {
      const v = parseStrict(rest, { 'data-dir': { type: 'string' }, org: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } });
      const orgId = reqUuid(v, 'org');
      const limit = intOpt(v, 'limit') ?? 100;
      const items = await withStore(req(v, 'data-dir'), (store) => orgDeadLetters(store, orgId, limit));
      if (v.json === true) out(JSON.stringify({ deadLetters: items }));
      else {
        out('deadAt\twebhookId\talertId\tkind\tchange\treason\tattempts\tlastError');
        for (const d of items) out([new Date(d.deadAtMs).toISOString(), d.webhookId, d.alertId, d.alertKind, d.change, d.reason, String(d.attempts), d.lastError ?? ''].join('\t'));
      }
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? 'admin webhooks needs a subcommand (add, list, remove, dead-letters)' : `unknown admin webhooks subcommand '${sub}'`);
  }
}
