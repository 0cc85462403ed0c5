// The robot link's floor for the telemetry benchmarks: a bare grpc-js server that serves the same two
// RobotLink methods the simulator's agents use and does nothing with what they send. Connect answers
// the first message (Hello) with a Welcome so agents start their telemetry stream; PublishTelemetry
// sends its response headers at stream start (as the gateway does) and drops every message. No auth,
// no store, no decode: what receiving the same gRPC messages costs on its own.
//
// --late-headers plays a gateway older than acknowledged telemetry (headers only with the final receipt), to check
// that agents keep their memory flat against it.
//
//   node bench/lib/bare-grpc.mjs [--late-headers]   prints {"event":"ready","grpc":"127.0.0.1:PORT"}, SIGTERM stops
import { create, toBinary } from '@bufbuild/protobuf';
import { Metadata, Server, ServerCredentials } from '@grpc/grpc-js';
import { GatewayMessageSchema, TelemetryReceiptSchema } from '../../dist/gen/fleetgw/v1/robot_link_pb.js';
import { CONNECT_PATH, PUBLISH_TELEMETRY_PATH } from '../../dist/protocol/service.js';

const raw = (b) => b;
const welcome = Buffer.from(toBinary(GatewayMessageSchema, create(GatewayMessageSchema, {
  body: { case: 'welcome', value: { robotId: 'bare', fleetId: 'bare', serverTimeMs: 0n } },
})));
const receipt = Buffer.from(toBinary(TelemetryReceiptSchema, create(TelemetryReceiptSchema, {})));
let batches = 0;
const lateHeaders = process.argv.includes('--late-headers');

const server = new Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
server.addService({
  Connect: { path: CONNECT_PATH, requestStream: true, responseStream: true, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
  PublishTelemetry: { path: PUBLISH_TELEMETRY_PATH, requestStream: true, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
}, {
  Connect: (call) => {
    let first = true;
    call.on('data', () => {
      if (first) call.write(welcome);
      first = false;
    });
    call.on('end', () => call.end());
    call.on('error', () => {});
  },
  PublishTelemetry: (call, callback) => {
    if (!lateHeaders) call.sendMetadata(new Metadata());
    call.on('data', () => { batches++; });
    call.on('end', () => callback(null, receipt));
    call.on('error', () => {});
  },
});
server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`bare-grpc: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', grpc: `127.0.0.1:${port}` })}\n`);
});
const stop = () => {
  process.stdout.write(`${JSON.stringify({ event: 'stopped', batches })}\n`);
  server.forceShutdown();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
