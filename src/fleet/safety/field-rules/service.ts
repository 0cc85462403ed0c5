/**
 * What the routes call: a rule change committed (rules.ts), then published to the fleet's online
 * robots (delivery.ts), then the delivery outcome appended to the rule's timeline
 * (`field_rule.delivered`, or `field_rule.delivery_incomplete` naming the robots that did not apply it).
 */
import type { EventLog } from '../../../events/index.js';
import type { Store } from '../../../store/lmdb.js';
import type { FleetRecord } from '../../../store/records.js';
import { unacknowledged, type FieldRuleDelivery, type RuleSetDeliveryReport } from './delivery.js';
import type { FieldRuleRecord } from './records.js';
import { createFieldRule, deleteFieldRule, editFieldRule, setFieldRuleEnabled, type FieldRuleInput } from './rules.js';

/** A change and what its delivery did. */
export interface FieldRuleChange {
  rule: FieldRuleRecord;
  delivery: RuleSetDeliveryReport;
}

/** Robots named in a delivery event (the full list is in the HTTP answer). */
const EVENT_ROBOTS_MAX = 100;

export class FieldRuleService {
  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly delivery: FieldRuleDelivery,
  ) {}

  /** Creates (no `directiveId`) or replaces a rule, then publishes the fleet's set. */
  async upsert(fleet: FleetRecord, directiveId: string | undefined, input: FieldRuleInput, nowMs: number): Promise<FieldRuleChange> {
    const rule = directiveId === undefined
      ? await createFieldRule(this.store, this.events, fleet, input, nowMs)
      : await editFieldRule(this.store, this.events, fleet.fleetId, directiveId, input, nowMs);
    return this.publish(rule);
  }

  /** Enables or disables a rule, then publishes the fleet's set (also when nothing changed: robots confirm they hold it). */
  async setEnabled(fleet: FleetRecord, directiveId: string, enabled: boolean, nowMs: number): Promise<FieldRuleChange> {
    return this.publish(await setFieldRuleEnabled(this.store, this.events, fleet.fleetId, directiveId, enabled, nowMs));
  }

  /** Deletes a rule, then publishes the fleet's set without it. */
  async remove(fleet: FleetRecord, directiveId: string, nowMs: number): Promise<FieldRuleChange> {
    return this.publish(await deleteFieldRule(this.store, this.events, fleet.fleetId, directiveId, nowMs));
  }

  private async publish(rule: FieldRuleRecord): Promise<FieldRuleChange> {
    const delivery = await this.delivery.publish(rule.fleetId);
    const missing = unacknowledged(delivery);
    this.events.append({
      fleetId: rule.fleetId,
      correlationId: rule.directiveId,
      atMs: Date.now(),
      kind: missing.length === 0 ? 'field_rule.delivered' : 'field_rule.delivery_incomplete',
      subject: { type: 'field_rule', id: rule.directiveId },
      data: {
        ruleSetVersion: delivery.ruleSetVersion,
        onlineRobots: delivery.robots.length,
        applied: delivery.robots.length - missing.length,
        notApplied: missing.slice(0, EVENT_ROBOTS_MAX).map((r) => ({ robotId: r.robotId, outcome: r.outcome, error: r.error })),
      },
    });
    return { rule, delivery };
  }
}
