// A lower floor than bare-grpc.mjs: node:http2 alone, serving the same two RobotLink methods with the
// gRPC framing written by hand (5-byte length prefix, status in trailers) and dropping every message.
// What the HTTP/2 layer costs without grpc-js's per-message machinery above it.
//
//   node bench/lib/bare-http2.mjs   prints {"event":"ready","grpc":"127.0.0.1:PORT"}, SIGTERM stops
import { create, toBinary } from '@bufbuild/protobuf';
import { createServer, constants } from 'node:http2';
import { GatewayMessageSchema, TelemetryReceiptSchema } from '../../dist/gen/fleetgw/v1/robot_link_pb.js';
import { CONNECT_PATH, PUBLISH_TELEMETRY_PATH } from '../../dist/protocol/service.js';

const framed = (bytes) => {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
};
const welcome = framed(toBinary(GatewayMessageSchema, create(GatewayMessageSchema, {
  body: { case: 'welcome', value: { robotId: 'bare', fleetId: 'bare', serverTimeMs: 0n } },
})));
const receipt = framed(toBinary(TelemetryReceiptSchema, create(TelemetryReceiptSchema, {})));
let chunks = 0;
const server = createServer();
server.on('stream', (stream, headers) => {
  const path = headers[constants.HTTP2_HEADER_PATH];
  stream.on('error', () => {});
  if (path !== CONNECT_PATH && path !== PUBLISH_TELEMETRY_PATH) {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  let first = true;
  stream.on('data', () => {
    chunks++;
    if (first && path === CONNECT_PATH) stream.write(welcome);
    first = false;
  });
  stream.on('end', () => {
    if (path === PUBLISH_TELEMETRY_PATH) stream.end(receipt);
    else stream.end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'ready', grpc: `127.0.0.1:${server.address().port}` })}\n`);
});
const stop = () => {
  process.stdout.write(`${JSON.stringify({ event: 'stopped', chunks })}\n`);
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
