/**
 * The RobotLink gRPC service, described by hand for grpc-js (no proto-loader): the method path is the
 * one `protoc` would derive from proto/fleetgw/v1/robot_link.proto, and the serializers are ours so
 * telemetry stays encoded on the gateway (see envelope.ts).
 */
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import type { GatewayMessage, RobotMessage } from '../gen/fleetgw/v1/robot_link_pb.js';
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

/** Server-side service definition for `server.addService`. */
export const robotLinkServiceDefinition: ServiceDefinition = { Connect: connect };

/** Client-side codec for `Client.makeBidiStreamRequest(CONNECT_PATH, ...)`. */
export const connectClientCodec = {
  serialize: (msg: RobotMessage | Uint8Array): Buffer => serializeRobotMessage(msg),
  deserialize: (buf: Buffer): GatewayMessage => deserializeGatewayMessage(buf),
};
