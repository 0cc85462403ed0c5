/**
 * The RobotLink gRPC service, described by hand for grpc-js (no proto-loader): the method path is the
 * one `protoc` would derive from proto/fleetgw/v1/robot_link.proto, and the serializers are ours so
 * telemetry stays encoded on the gateway (see envelope.ts and publishTelemetry below).
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { TelemetryReceiptSchema, type GatewayMessage, type RobotMessage, type TelemetryReceipt } from '../gen/fleetgw/v1/robot_link_pb.js';
import {
  deserializeGatewayMessage,
  deserializeRobotMessage,
  serializeGatewayMessage,
  serializeRobotInbound,
  serializeRobotMessage,
  type RobotInbound,
} from './envelope.js';

/** HTTP/2 path of `rpc Connect(stream RobotMessage) returns (stream GatewayMessage)`. */
export const CONNECT_PATH = '/fleetgw.v1.RobotLink/Connect';

/** HTTP/2 path of `rpc PublishTelemetry(stream TelemetryBatch) returns (stream TelemetryReceipt)`. */
export const PUBLISH_TELEMETRY_PATH = '/fleetgw.v1.RobotLink/PublishTelemetry';

/** Metadata key carrying the robot id; the token travels as `authorization: Bearer <token>`. */
export const ROBOT_ID_METADATA = 'x-robot-id';

// grpc-js types one request type for both directions of a definition, so the server's is typed by
// what the server sees (RobotInbound); agents use connectClientCodec instead.
const connect: MethodDefinition<RobotInbound, GatewayMessage> = {
  path: CONNECT_PATH,
  requestStream: true,
  responseStream: true,
  requestSerialize: (msg: RobotInbound) => serializeRobotInbound(msg),
  requestDeserialize: (buf: Buffer) => deserializeRobotMessage(buf),
  responseSerialize: (msg: GatewayMessage) => serializeGatewayMessage(msg),
  responseDeserialize: (buf: Buffer) => deserializeGatewayMessage(buf),
  originalName: 'connect',
};

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// Telemetry batches cross the gateway's main thread as raw bytes: the "deserializer" is the identity,
// so nothing is decoded here (ingest workers decode). Agents likewise write already-encoded batches.
const publishTelemetry: MethodDefinition<Uint8Array, TelemetryReceipt> = {
  path: PUBLISH_TELEMETRY_PATH,
  requestStream: true,
  // A stream (receipts of durable batches); agents that send no `seq` still get
  // exactly one message, so clients built for the single-receipt call work unchanged.
  responseStream: true,
  requestSerialize: asBuffer,
  requestDeserialize: (buf: Buffer) => buf,
  responseSerialize: (msg: TelemetryReceipt) => asBuffer(toBinary(TelemetryReceiptSchema, msg)),
  responseDeserialize: (buf: Buffer) => fromBinary(TelemetryReceiptSchema, buf),
  originalName: 'publishTelemetry',
};

/** Server-side service definition for `server.addService`. */
export const robotLinkServiceDefinition: ServiceDefinition = { Connect: connect, PublishTelemetry: publishTelemetry };

/** Client-side codec for `Client.makeBidiStreamRequest(CONNECT_PATH, ...)`. */
export const connectClientCodec = {
  serialize: (msg: RobotMessage | Uint8Array): Buffer => serializeRobotMessage(msg),
  deserialize: (buf: Buffer): GatewayMessage => deserializeGatewayMessage(buf),
};

/** Client-side codec for `Client.makeBidiStreamRequest(PUBLISH_TELEMETRY_PATH, ...)`: encoded TelemetryBatch bytes in. */
export const publishTelemetryClientCodec = {
  serialize: asBuffer,
  deserialize: (buf: Buffer): TelemetryReceipt => fromBinary(TelemetryReceiptSchema, buf),
};
