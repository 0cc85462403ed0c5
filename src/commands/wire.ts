/** Builds the protobuf `Command` a record is sent as (each action's mapping is in its declaration, src/commands/catalog). */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { CommandSchema, type Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import { declarationOf } from './catalog/index.js';
import type { CommandRecord } from './types.js';

type WireAction = NonNullable<MessageInitShape<typeof CommandSchema>['action']>;

/** The `Command.action` oneof for a record (the record's action and args were validated on submit). */
function wireAction(rec: CommandRecord): WireAction {
  const d = declarationOf(rec.action);
  // The declaration pairs its case with the message its toWire builds (CommandDeclaration.wire).
  return { case: d.wire.case, value: d.wire.toWire(rec.args) } as WireAction;
}

/**
 * The wire message for a record. Resends reuse the same commandId and seq, which is what lets the
 * agent drop a duplicate instead of applying it twice.
 */
export function toWire(rec: CommandRecord): Command {
  return create(CommandSchema, {
    commandId: rec.commandId,
    issuedAtMs: BigInt(rec.createdAtMs),
    seq: BigInt(rec.seq),
    action: wireAction(rec),
  });
}
