/**
 * The delivery bodies, one per webhook format (docs/webhooks.md has an example of each):
 *
 * - `fleetgw`: the alert as the REST API shows it, with the change (`opened`, `acknowledged`, `resolved`).
 * - `slack`: an incoming-webhook message (`text`), one line per change.
 * - `alertmanager`: Prometheus Alertmanager's webhook payload (version 4) with one alert, so receivers
 *   written for Alertmanager (and Alertmanager-compatible relays) take it unchanged.
 * - `pagerduty`: a PagerDuty Events API v2 event: trigger on opened, acknowledge, resolve; the alert id
 *   is the dedup key, so the three land on one incident.
 */
import type { AlertChange } from '../fleet/safety/alerts/alert-service.js';
import type { AlertRecord } from '../fleet/safety/alerts/records.js';
import type { WebhookRecord } from './records.js';

/** The changes that are delivered; a repeat of an unresolved alert is not (it can come every second). */
export const DELIVERED_CHANGES: ReadonlySet<AlertChange> = new Set<AlertChange>(['opened', 'acknowledged', 'resolved']);

const iso = (ms: number | null): string => (ms === null ? '0001-01-01T00:00:00Z' : new Date(ms).toISOString());

/** The JSON text of one delivery of `alert`'s `change` to `hook`. */
export function deliveryBody(hook: Pick<WebhookRecord, 'format' | 'routingKey'>, alert: Readonly<AlertRecord>, change: AlertChange, deliveryId: string, nowMs: number): string {
  switch (hook.format) {
    case 'slack':
      return JSON.stringify(slack(alert, change));
    case 'alertmanager':
      return JSON.stringify(alertmanager(alert));
    case 'pagerduty':
      return JSON.stringify(pagerduty(alert, change, hook.routingKey ?? ''));
    default:
      return JSON.stringify(fleetgw(alert, change, deliveryId, nowMs));
  }
}

function fleetgw(a: Readonly<AlertRecord>, change: AlertChange, deliveryId: string, nowMs: number): Record<string, unknown> {
  return {
    type: `alert.${change}`,
    deliveryId,
    sentAtMs: nowMs,
    alert: {
      alertId: a.alertId,
      orgId: a.orgId,
      fleetId: a.fleetId,
      kind: a.kind,
      severity: a.severity,
      state: a.state,
      subject: { type: a.subject.type, id: a.subject.id },
      robotId: a.robotId,
      message: a.message,
      details: a.details,
      occurrences: a.occurrences,
      openedAtMs: a.openedAtMs,
      lastRaisedAtMs: a.lastRaisedAtMs,
      acknowledgedAtMs: a.acknowledgedAtMs,
      resolvedAtMs: a.resolvedAtMs,
      resolution: a.resolution,
      correlationId: a.correlationId,
    },
  };
}

function slack(a: Readonly<AlertRecord>, change: AlertChange): Record<string, unknown> {
  const where = a.robotId !== null ? `robot ${a.robotId}` : `${a.subject.type} ${a.subject.id}`;
  return { text: `[${a.severity.toUpperCase()}] ${a.kind} ${change}: ${a.message} (fleet ${a.fleetId}, ${where}, alert ${a.alertId})` };
}

function alertmanager(a: Readonly<AlertRecord>): Record<string, unknown> {
  const status = a.state === 'resolved' ? 'resolved' : 'firing';
  const labels: Record<string, string> = { alertname: a.kind, severity: a.severity, org_id: a.orgId, fleet_id: a.fleetId, subject: `${a.subject.type}/${a.subject.id}` };
  if (a.robotId !== null) labels.robot_id = a.robotId;
  const annotations = { summary: a.message, alert_id: a.alertId, state: a.state };
  return {
    version: '4',
    groupKey: `fleetgw/${a.fleetId}/${a.kind}/${a.conditionKey}`,
    truncatedAlerts: 0,
    status,
    receiver: 'fleetgw',
    groupLabels: { alertname: a.kind },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: '',
    alerts: [{ status, labels, annotations, startsAt: iso(a.openedAtMs), endsAt: iso(a.resolvedAtMs), generatorURL: '', fingerprint: a.alertId }],
  };
}

function pagerduty(a: Readonly<AlertRecord>, change: AlertChange, routingKey: string): Record<string, unknown> {
  const action = change === 'resolved' ? 'resolve' : change === 'acknowledged' ? 'acknowledge' : 'trigger';
  const event: Record<string, unknown> = { routing_key: routingKey, event_action: action, dedup_key: a.alertId };
  if (action === 'trigger') {
    event.payload = {
      summary: a.message.slice(0, 1024),
      source: a.robotId ?? `${a.subject.type}/${a.subject.id}`,
      severity: a.severity,
      timestamp: iso(a.openedAtMs),
      component: a.kind,
      group: a.fleetId,
      custom_details: { ...a.details, alertId: a.alertId, orgId: a.orgId },
    };
  }
  return event;
}
