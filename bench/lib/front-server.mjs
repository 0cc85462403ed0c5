// One server for bench/http-front.mjs: `node bench/lib/front-server.mjs MODE` with MODE
//   bare      a uWS app answering GET with a fixed 120-byte JSON body (what the gateway's adapter sits on)
//   deadline  the same plus the head deadline of src/http/head-deadline.ts (dist/), as the gateway runs it
//   proxy     the bare app on a loopback port behind a Node `net` server on the measured port that pipes
//             bytes both ways: the cheapest possible front TCP layer (it parses nothing)
// Prints {"port": N} when listening.
import { createServer, connect } from 'node:net';
import * as uws from '../../dist/http/uws.js';
import { pino } from 'pino';
import { HeadDeadline, reportingRoutes } from '../../dist/http/head-deadline.js';

const mode = process.argv[2];
const BODY = JSON.stringify({ robot_id: '3f1c2d4e-0000-4000-8000-000000000001', online: true, battery_pct: 87.5, mode: 'idle' }).padEnd(120, ' ');

const app = uws.App();
// Every mode reads the client address, as the gateway's adapter does for each request; `deadline` adds
// what the gateway adds: the connection tracking and one report per request.
const decoder = new TextDecoder();
let deadline = null;
if (mode === 'deadline') {
  deadline = new HeadDeadline(pino({ enabled: false }));
  deadline.attach(app);
  // The gateway's other routes (WebSocket, /metrics) go through this wrapper; here it only has to exist.
  reportingRoutes(app, deadline);
}
app.any('/*', (res) => {
  const address = decoder.decode(res.getRemoteAddressAsText());
  deadline?.sawRequest(address);
  res.cork(() => res.writeHeader('content-type', 'application/json').end(BODY));
});
app.listen('127.0.0.1', 0, (sock) => {
  const inner = uws.us_socket_local_port(sock);
  if (mode !== 'proxy') {
    console.log(JSON.stringify({ port: inner }));
    return;
  }
  const front = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ port: inner, host: '127.0.0.1', noDelay: true });
    client.pipe(upstream).pipe(client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  front.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: front.address().port })));
});
