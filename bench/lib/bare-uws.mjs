// Baseline server for http-read.mjs: a bare uWebSockets.js handler that returns a constant JSON body
// (read once from the file in argv[2]) with the same content type as the gateway. No auth, no routing,
// no store: the ceiling the gateway's GET /v1/robots/{id} is compared with.
import { readFileSync } from 'node:fs';
import * as uws from '../../dist/http/uws.js';

const body = readFileSync(process.argv[2]);
const app = uws.App();
app.get('/*', (res) => {
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('content-type', 'application/json; charset=utf-8').end(body);
  });
});
app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) {
    process.stderr.write('bare-uws: listen failed\n');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', port: uws.us_socket_local_port(sock) })}\n`);
  const stop = () => {
    uws.us_listen_socket_close(sock);
    app.close?.();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
