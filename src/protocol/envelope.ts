/**
 * Serializers for the robot link's two message types, used by the grpc-js service definition.
 * (Telemetry on Connect is deprecated: agents send it on PublishTelemetry, whose bytes need no
 * peeking at all; the peek below stays for older agents, see docs/robot-link.md.)
 *
 * The gateway must not decode telemetry on its main thread (ingest workers do), so the RobotMessage
 * deserializer scans only the envelope's top-level fields. When the oneof ends up as `telemetry`
 * (field 2), it returns the TelemetryBatch's raw bytes untouched; hello and ack envelopes, which are
 * small and rare, are decoded with protobuf-es.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  GatewayMessageSchema,
  RobotMessageSchema,
  type GatewayMessage,
  type RobotMessage,
} from '../gen/fleetgw/v1/robot_link_pb.js';
import { readVarint32, skipVarint64, varintSize, WireType, writeVarint } from './varint.js';

/** What the gateway receives from a robot stream. */
export type RobotInbound =
  | { kind: 'telemetry'; /** Encoded TelemetryBatch (may be a view into the received buffer). */ batch: Uint8Array }
  | { kind: 'message'; message: RobotMessage };

const FIELD_HELLO = 1;
const FIELD_TELEMETRY = 2;
// RobotMessage's `body` oneof spans fields 1 (hello) .. 8 (field_rule_ack; 6 health_report, 7
// object_detections): the last one on the wire wins. A new member must extend this range.
const FIELD_LAST_BODY = 8;

/**
 * Decodes a RobotMessage envelope; telemetry stays encoded.
 *
 * Protobuf semantics are kept without decoding the batch: the last oneof member on the wire wins,
 * and repeated occurrences of the same message field merge, which for a TelemetryBatch (one repeated
 * field) is exactly the concatenation of the occurrences' bytes. Unknown fields are skipped.
 * Throws on malformed input (grpc-js then ends the call with INTERNAL).
 */
export function deserializeRobotMessage(buf: Uint8Array): RobotInbound {
  let pos = 0;
  let lastOneof = 0;
  // Telemetry slices since the oneof last switched to `telemetry`.
  let slices: Uint8Array[] = [];
  while (pos < buf.length) {
    const tag = readVarint32(buf, pos);
    pos = tag.next;
    const field = Math.floor(tag.value / 8);
    const wire = tag.value & 7;
    if (field === 0) throw new Error('malformed RobotMessage: field number 0');
    const isOneof = field >= FIELD_HELLO && field <= FIELD_LAST_BODY;
    if (isOneof && wire !== WireType.LengthDelimited) throw new Error(`malformed RobotMessage: field ${field} is not length-delimited`);
    switch (wire) {
      case WireType.Varint:
        pos = skipVarint64(buf, pos);
        break;
      case WireType.Fixed64:
        pos += 8;
        break;
      case WireType.Fixed32:
        pos += 4;
        break;
      case WireType.LengthDelimited: {
        const len = readVarint32(buf, pos);
        const start = len.next;
        pos = start + len.value;
        if (pos <= buf.length && field === FIELD_TELEMETRY) {
          if (lastOneof !== FIELD_TELEMETRY) slices = [];
          slices.push(buf.subarray(start, pos));
        }
        break;
      }
      default:
        throw new Error(`malformed RobotMessage: wire type ${wire}`);
    }
    if (pos > buf.length) throw new Error('malformed RobotMessage: field overruns the message');
    if (isOneof) lastOneof = field;
  }
  if (lastOneof === FIELD_TELEMETRY) {
    const batch = slices.length === 1 ? slices[0]! : Buffer.concat(slices);
    return { kind: 'telemetry', batch };
  }
  return { kind: 'message', message: fromBinary(RobotMessageSchema, buf) };
}

/** Encodes a GatewayMessage for the wire. */
export function serializeGatewayMessage(msg: GatewayMessage): Buffer {
  const bytes = toBinary(GatewayMessageSchema, msg);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a GatewayMessage (agent side). */
export function deserializeGatewayMessage(buf: Uint8Array): GatewayMessage {
  return fromBinary(GatewayMessageSchema, buf);
}

/** Encodes a RobotMessage (agent side); already-encoded envelopes pass through unchanged. */
export function serializeRobotMessage(msg: RobotMessage | Uint8Array): Buffer {
  const bytes = msg instanceof Uint8Array ? msg : toBinary(RobotMessageSchema, msg);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Wraps encoded TelemetryBatch bytes in a RobotMessage envelope (field 2) without re-encoding them. */
export function encodeTelemetryEnvelope(batch: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(1 + varintSize(batch.length) + batch.length);
  out[0] = (FIELD_TELEMETRY << 3) | WireType.LengthDelimited;
  const pos = writeVarint(out, 1, batch.length);
  out.set(batch, pos);
  return out;
}

/** Encodes what the gateway decoded back to wire form (the inverse of deserializeRobotMessage). */
export function serializeRobotInbound(msg: RobotInbound): Buffer {
  return msg.kind === 'telemetry' ? encodeTelemetryEnvelope(msg.batch) : serializeRobotMessage(msg.message);
}
