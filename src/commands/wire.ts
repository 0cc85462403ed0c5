/** Builds the protobuf `Command` a record is sent as. */
import { create } from '@bufbuild/protobuf';
import { CommandSchema, type Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { CommandRecord } from './types.js';

/**
 * The wire message for a record. Resends reuse the same commandId and seq, which is what lets the
 * agent drop a duplicate instead of applying it twice.
 */
export function toWire(rec: CommandRecord): Command {
  switch (rec.action) {
    case 'stop':
      return create(CommandSchema, {
        commandId: rec.commandId,
        issuedAtMs: BigInt(rec.createdAtMs),
        seq: BigInt(rec.seq),
        action: { case: 'stop', value: { reason: rec.args.reason } },
      });
  }
}
