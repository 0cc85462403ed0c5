/**
 * Why the inbound gate refused a message: the `reason` label of
 * `fleetgw_vda5050_messages_rejected_total` (every one is published from 0).
 */
export const REJECT_REASONS = [
  /** Larger than the gate's byte bound: dropped unread. */
  'too_large',
  /** On a topic the gateway does not read from robots. */
  'unknown_topic',
  /** Not UTF-8 JSON. */
  'not_json',
  /** `version` of another major or minor version than the configured one. */
  'wrong_version',
  /** `manufacturer` or `serialNumber` differs from the topic's. */
  'wrong_identity',
  /** Fails the topic's schema (a required field missing, a wrong type, enum value or bound). */
  'schema',
  /** `headerId` not above the last one accepted on this robot's topic. */
  'out_of_order',
  /** The gate itself failed on the message (a bug; logged with the error). */
  'gate_error',
] as const;

export type RejectReason = (typeof REJECT_REASONS)[number];

/** Index of each reason in {@link REJECT_REASONS} (the counters are kept in that order). */
export const REASON_INDEX: { readonly [R in RejectReason]: number } = Object.fromEntries(REJECT_REASONS.map((r, i) => [r, i])) as { [R in RejectReason]: number };
