/** LMDB key shapes of the `webhooks` and `webhookDeadLetters` dbs. Private to src/webhooks. */
import type { DeadLetterRecord } from './records.js';

/** The key of a webhook record. */
export const webhookKey = (orgId: string, webhookId: string): string => `${orgId}/${webhookId}`;

/** `<orgId>/<deadAtMs:12 hex>/<id>`: an organization's dead letters in time order. */
export function deadLetterKey(rec: Pick<DeadLetterRecord, 'orgId' | 'deadAtMs' | 'deadLetterId'>): string {
  return `${rec.orgId}/${rec.deadAtMs.toString(16).padStart(12, '0')}/${rec.deadLetterId}`;
}
