/**
 * Raw HTTP/1.1 over a TCP socket, for requests an HTTP client would refuse to send or would normalize
 * (two Content-Length lines, bare CR or LF, obs-fold, HEAD read byte by byte, HTTP/1.0).
 */
import { connect } from 'node:net';

export interface RawExchange {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** The server closed the connection before `waitMs` elapsed. */
  closed: boolean;
  /** Milliseconds from connect to close (or to the end of the wait). */
  ms: number;
}

/**
 * Sends `chunks` (one write each, `gapMs` apart) and collects the answer until the server closes the
 * connection, `done(text)` holds (after every chunk went out), or `waitMs` passes.
 */
export function rawExchange(url: string, chunks: string | string[], waitMs = 1500, gapMs = 0, done?: (text: string) => boolean): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const parts = typeof chunks === 'string' ? [chunks] : chunks;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let text = '';
    let finished = false;
    let allSent = false;
    const sock = connect(Number(port), hostname, () => {
      void (async () => {
        for (const [i, part] of parts.entries()) {
          if (sock.destroyed) return;
          sock.write(part, 'latin1');
          // The gap is the client's pacing (the time the server must tolerate), not a wait for an answer.
          if (gapMs > 0 && i < parts.length - 1) await new Promise((r) => setTimeout(r, gapMs));
        }
        allSent = true;
        if (done?.(text)) finish(false);
      })();
    });
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (allSent && done?.(text)) finish(false);
    });
    sock.on('close', () => finish(true));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the answer is a close, not a failure of the exchange.
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') finish(true);
      else reject(err);
    });
  });
}

/**
 * A `done` predicate for rawExchange: `n` complete responses have arrived (heads, and bodies as long as
 * their Content-Length; a response without one is complete only at the close).
 */
export function responsesComplete(n: number): (text: string) => boolean {
  return (text) => {
    let rest = text;
    for (let i = 0; i < n; i++) {
      const end = rest.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(rest.slice(0, end + 2))?.[1];
      if (length === undefined || rest.length < end + 4 + Number(length)) return false;
      rest = rest.slice(end + 4 + Number(length));
    }
    return true;
  };
}

/** One parsed response out of a raw exchange. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Splits the bytes of one or more HTTP/1.1 responses. Bodies are framed by Content-Length (or run to the
 * end without one); with
 * `bodiless` (answers to HEAD) every response is taken to have no body whatever it declares.
 */
export function parseResponses(text: string, bodiless = false): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    // Without Content-Length (and not chunked), a body runs to the close (RFC 9112 section 6.3), as in
    // the protocol-error answers uWebSockets.js writes itself.
    const noBody = bodiless || status === 204 || status === 304 || (status >= 100 && status < 200);
    const length = noBody ? 0 : headers['content-length'] !== undefined ? Number(headers['content-length']) : rest.length - end - 4;
    out.push({ status, headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}
