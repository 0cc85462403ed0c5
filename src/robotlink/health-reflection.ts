/**
 * The standard gRPC operations services on the robot link port: health (`grpc.health.v1.Health`,
 * grpc-health-check) and server reflection (`grpc.reflection.v1` and `v1alpha`, @grpc/reflection).
 * Both are unauthenticated, like every gRPC health and reflection endpoint: health says only
 * SERVING or NOT_SERVING, and reflection describes the public contract in proto/ (the same
 * descriptors the agents are built from). Neither reaches a robot session: robot authentication
 * stays on `fleetgw.v1.RobotLink` (server.ts). docs/robot-link.md says why this is safe.
 *
 * Reflection is built from the descriptors embedded in the generated code (src/gen), not from
 * proto files read at run time, so what it publishes is what this build speaks.
 */
import { toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { Server } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { file_fleetgw_v1_robot_link } from '../gen/fleetgw/v1/robot_link_pb.js';
import { file_fleetgw_v1_telemetry } from '../gen/fleetgw/v1/telemetry_pb.js';

/** The robot link's fully qualified service name (the health status is kept under it and under ''). */
export const ROBOT_LINK_SERVICE = 'fleetgw.v1.RobotLink';
const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** Sets what the health service answers. */
export interface HealthStatus {
  setServing(serving: boolean): void;
}

/**
 * Adds the health and reflection services to `server`. Health starts NOT_SERVING: the gateway
 * turns it to SERVING once it is ready (and back when it is not).
 */
export function addHealthAndReflection(server: Server): HealthStatus {
  const health = new HealthImplementation({ '': 'NOT_SERVING', [ROBOT_LINK_SERVICE]: 'NOT_SERVING' });
  health.addToServer(server);
  const files = [file_fleetgw_v1_telemetry, file_fleetgw_v1_robot_link].map((f) => Buffer.from(toBinary(FileDescriptorProtoSchema, f.proto)));
  const healthFiles = healthService.Check!.requestType.fileDescriptorProtos;
  // @grpc/reflection reads only `fileDescriptorProtos` of each entry of a proto-loader package
  // definition: one entry per service carries the files that define it and its dependencies.
  const definition = {
    [ROBOT_LINK_SERVICE]: { format: 'Protocol Buffer 3 DescriptorProto', type: {}, fileDescriptorProtos: files },
    [HEALTH_SERVICE]: { format: 'Protocol Buffer 3 DescriptorProto', type: {}, fileDescriptorProtos: healthFiles },
  };
  new ReflectionService(definition as unknown as ConstructorParameters<typeof ReflectionService>[0]).addToServer(server);
  let current: boolean | null = null;
  return {
    setServing(serving) {
      if (serving === current) return;
      current = serving;
      const status = serving ? 'SERVING' : 'NOT_SERVING';
      health.setStatus('', status);
      health.setStatus(ROBOT_LINK_SERVICE, status);
    },
  };
}
