// A minimal keep-alive HTTP/1.1 client for latency benchmarks: one TCP connection, one request at a
// time, request bytes built by hand, response parsed by Content-Length only (the gateway always sends
// it). Node's http client spends about 0.1 ms of CPU per request on its own machinery (agent, parser,
// IncomingMessage streams); on a 2-core machine that is CPU taken from the server being measured and
// time added to every figure, so the latency benches use this instead (like wrk or a robot operator's
// lean client would). `--client node` in the benches switches back to node:http for comparison.
import net from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * Opens a connection to `base` (http://host:port) and returns `request(path, body?) -> {status, body}`
 * plus `close()`. Requests must not overlap (the benches await each one).
 */
export async function leanHttp(base, apiKey) {
  const url = new URL(base);
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  socket.setNoDelay(true);
  await new Promise((res, rej) => {
    socket.once('connect', res);
    socket.once('error', rej);
  });
  const head = (method, path, len) => `${method} ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${apiKey}\r\n`
    + (len === null ? '\r\n' : `content-type: application/json\r\ncontent-length: ${len}\r\n\r\n`);
  let buf = Buffer.alloc(0);
  let pending = null;
  const tryParse = () => {
    const end = buf.indexOf(CRLF2);
    if (end < 0) return;
    const headText = buf.subarray(0, end).toString('latin1');
    const m = /\r\ncontent-length: *(\d+)/i.exec(headText);
    const len = m ? Number(m[1]) : 0;
    if (buf.length < end + 4 + len) return;
    const status = Number(headText.slice(9, 12));
    const bodyText = buf.subarray(end + 4, end + 4 + len).toString('utf8');
    buf = buf.subarray(end + 4 + len);
    const p = pending;
    pending = null;
    try {
      p.res({ status, body: bodyText === '' ? null : JSON.parse(bodyText) });
    } catch (e) {
      p.rej(e);
    }
  };
  socket.on('data', (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    if (pending) tryParse();
  });
  socket.on('error', (e) => pending?.rej(e));
  const request = (path, body) => new Promise((res, rej) => {
    pending = { res, rej };
    if (body === undefined) socket.write(head('GET', path, null));
    else {
      const payload = JSON.stringify(body);
      socket.write(head('POST', path, Buffer.byteLength(payload)) + payload);
    }
  });
  return { request, close: () => socket.destroy() };
}
