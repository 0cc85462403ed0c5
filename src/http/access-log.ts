/**
 * The access log: one line per HTTP request, written by a {@link RequestObserver} on the adapter's
 * completion hook. It names the route template, never the raw path (ids, and whatever a caller pasted
 * into it) nor the query string (stream tickets travel there), and the key's id, never a credential.
 */
import type { Logger } from 'pino';
import type { RequestDoneInfo, RequestObserver } from './request-done.js';

/** Where lines formatted as bytes outside pino go: the process logger's `bytes` (src/gateway/logger.ts). */
export interface LogBytesSink {
  /**
   * Writes whole lines to the log's destination (pretty-printed in pretty mode), copied at once: the
   * caller reuses its buffer. The destination's bound applies: past its bound (docs/logging.md),
   * the chunk is dropped and its lines counted like any other line.
   */
  write(chunk: Uint8Array): void;
  /**
   * Registers a writer's own flush, which exit paths call before the log's buffer is written out.
   * @returns unregisters it (a gateway that closes in a process that goes on: tests, embedders)
   */
  beforeFlush(flush: () => void): () => void;
}

/** Size of the reused buffer the access lines are written into (16 KiB). */
export const ACCESS_BUFFER_BYTES = 16 * 1024;

/**
 * Bytes of lines gathered before they go to the sink within one event-loop turn (8 KiB, below
 * sonic-boom's 16 KiB write size); fewer go at the end of the turn.
 */
export const ACCESS_CHUNK_BYTES = 8 * 1024;

/** Room a line on the byte path needs at most: a standard method, a short template and fixed-size ids. */
const FAST_LINE_MAX = 2048;

/** Longest route template written on the byte path; a longer one takes the string path. */
const ROUTE_BYTES_MAX = 256;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * An observer that writes each finished request as one `info` line on `log`.
 *
 * With `sink` (the process logger's byte sink), the line is written here, as bytes into a reused
 * buffer, rather than by pino: the access line is the one log line written per request, and building
 * it as a string and encoding it again was a fifth of what a whole authenticated read cost
 * (bench/README.md#http-read; bench/notes/http.md, "The access line's cost"). The fields and their order are pino's (`level`, `time`, `pid`, then the
 * `component` binding, the request fields, `msg`), byte for byte (test/http/access-log.test.ts compares
 * them, hostile method strings included), so a reader of the log cannot tell the difference.
 *
 * The buffer is handed to the sink when {@link ACCESS_CHUNK_BYTES} have gathered, and at the end of the
 * event-loop turn otherwise; the sink copies it into the process log's bounded queue (4 MiB, then lines
 * are dropped and counted: docs/logging.md). Nothing here waits for stderr.
 *
 * Every value is a number, a fixed word, or a string from a closed alphabet (route templates, UUID key
 * ids, request ids of `[A-Za-z0-9-_.:@/+=]`, hex trace ids); the method, the one string a client
 * chooses, is written as is when it is a standard method and through JSON.stringify otherwise.
 */
export function accessLog(log: Logger, sink?: LogBytesSink): AccessLogObserver {
  if (sink === undefined) return Object.assign(pinoAccessLog(log), { release: () => {} });
  const w = new AccessLineWriter((chunk) => sink.write(chunk));
  const unregister = sink.beforeFlush(() => w.flush());
  const observe = (info: RequestDoneInfo): void => {
    if (!log.isLevelEnabled('info')) return;
    w.write(info);
  };
  return Object.assign(observe, {
    release: () => {
      w.flush();
      unregister();
    },
  });
}

/** The access log's observer; `release` writes its pending lines and detaches it from the sink's exit flush. */
export type AccessLogObserver = RequestObserver & { release(): void };

/** The same line through pino (loggers that are not the process logger: tests, embedders). */
function pinoAccessLog(log: Logger): RequestObserver {
  return (info: RequestDoneInfo): void => {
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        method: info.method,
        route: info.route,
        status: info.status,
        // 0.1 ms is finer than anything an operator acts on, and keeps the line short.
        durationMs: Math.round(info.durationMs * 10) / 10,
        keyId: info.keyId,
        requestId: info.requestId,
        ...(info.traceId !== null ? { traceId: info.traceId } : {}),
        ...(info.aborted ? { aborted: true } : {}),
      },
      `${info.method} ${info.route ?? '(no route)'} ${info.status}`,
    );
  };
}

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');

/** The bytes of one route template's fields: `,"route":...` and, per standard method, `,"msg":"M R `. */
interface RouteBytes {
  route: Uint8Array;
  msg: Map<string, Uint8Array>;
}

/**
 * Formats access lines as UTF-8 into one reused buffer and hands whole lines to `sink`, which must
 * copy them before it returns.
 */
export class AccessLineWriter {
  private readonly buf = Buffer.allocUnsafe(ACCESS_BUFFER_BYTES);
  private len = 0;
  private scheduled = false;
  private readonly head: Uint8Array;
  private readonly afterTime = ascii(`","pid":${process.pid},"component":"http","method":`);
  private readonly routes = new Map<string | null, RouteBytes | null>();
  private readonly methods = new Map<string, Uint8Array>();
  private isoMs = -1;
  private readonly iso = Buffer.alloc(24);
  private readonly flushNow = (): void => this.flush();

  constructor(private readonly sink: (chunk: Uint8Array) => void) {
    this.head = ascii('{"level":"info","time":"');
  }

  /** Appends one request's line; the line reaches the sink at the end of this turn at the latest. */
  write(info: RequestDoneInfo): void {
    const route = this.routeBytes(info.route);
    const method = METHODS.has(info.method) ? this.methodBytes(info.method) : null;
    if (route === null || method === null || !plainId(info.keyId) || !plainId(info.requestId) || !plainId(info.traceId)) {
      this.writeString(stringLine(info));
    } else {
      if (ACCESS_BUFFER_BYTES - this.len < FAST_LINE_MAX) this.flush();
      this.writeFast(info, method, route);
    }
    if (this.len >= ACCESS_CHUNK_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
  }

  /** Hands what has gathered to the sink (which copies it) and starts the buffer over. */
  flush(): void {
    this.scheduled = false;
    if (this.len === 0) return;
    const n = this.len;
    this.len = 0;
    this.sink(this.buf.subarray(0, n));
  }

  private writeFast(info: RequestDoneInfo, method: Uint8Array, route: RouteBytes): void {
    const b = this.buf;
    let o = this.len;
    b.set(this.head, o);
    o += this.head.length;
    b.set(this.isoTime(), o);
    o += 24;
    b.set(this.afterTime, o);
    o += this.afterTime.length;
    b.set(method, o);
    o += method.length;
    b.set(route.route, o);
    o += route.route.length;
    o = putAscii(b, o, ',"status":');
    o = putAscii(b, o, String(info.status));
    o = putAscii(b, o, ',"durationMs":');
    o = putAscii(b, o, String(Math.round(info.durationMs * 10) / 10));
    if (info.keyId === null) o = putAscii(b, o, ',"keyId":null');
    else {
      o = putAscii(b, o, ',"keyId":"');
      o = putAscii(b, o, info.keyId);
      b[o++] = 0x22;
    }
    o = putAscii(b, o, ',"requestId":"');
    o = putAscii(b, o, info.requestId);
    b[o++] = 0x22;
    if (info.traceId !== null) {
      o = putAscii(b, o, ',"traceId":"');
      o = putAscii(b, o, info.traceId);
      b[o++] = 0x22;
    }
    if (info.aborted) o = putAscii(b, o, ',"aborted":true');
    let msg = route.msg.get(info.method);
    if (msg === undefined) {
      msg = ascii(`,"msg":"${info.method} ${info.route ?? '(no route)'} `);
      route.msg.set(info.method, msg);
    }
    b.set(msg, o);
    o += msg.length;
    o = putAscii(b, o, String(info.status));
    o = putAscii(b, o, '"}\n');
    this.len = o;
  }

  /** A line the byte path does not take (an odd method, an odd template): encoded from its string. */
  private writeString(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (bytes > ACCESS_BUFFER_BYTES - this.len) this.flush();
    if (bytes > ACCESS_BUFFER_BYTES) {
      this.sink(Buffer.from(line));
      return;
    }
    this.len += this.buf.write(line, this.len, 'utf8');
  }

  /** The route's fixed bytes, or null when the template needs JSON escaping or is too long (string path). */
  private routeBytes(route: string | null): RouteBytes | null {
    let r = this.routes.get(route);
    if (r === undefined) {
      const plain = route === null || (route.length <= ROUTE_BYTES_MAX && /^[\x20-\x7e]*$/.test(route) && !/["\\]/.test(route));
      r = plain ? { route: ascii(`,"route":${route === null ? 'null' : `"${route}"`}`), msg: new Map() } : null;
      // Templates come from the route table (a few dozen); the bound only guards against a caller's surprise.
      if (this.routes.size < 4096) this.routes.set(route, r);
    }
    return r;
  }

  private methodBytes(method: string): Uint8Array {
    let m = this.methods.get(method);
    if (m === undefined) {
      m = ascii(`"${method}"`);
      this.methods.set(method, m);
    }
    return m;
  }

  // Requests within one millisecond share a timestamp: formatting a Date costs more than the rest of the line.
  private isoTime(): Uint8Array {
    const now = Date.now();
    if (now !== this.isoMs) {
      this.isoMs = now;
      this.iso.write(new Date(now).toISOString(), 0, 'latin1');
    }
    return this.iso;
  }
}

/** Writes a string of ASCII characters; the caller knows it is ASCII (fixed words, numbers). */
function putAscii(b: Buffer, o: number, s: string): number {
  for (let i = 0; i < s.length; i++) b[o + i] = s.charCodeAt(i);
  return o + s.length;
}

/** An id the byte path writes as is: printable ASCII that JSON needs no escape for (or absent). */
function plainId(s: string | null): boolean {
  if (s === null) return true;
  if (s.length > 128) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The whole line as a string, each string value escaped exactly as pino escapes it ({@link pinoString}). */
function stringLine(info: RequestDoneInfo): string {
  const str = (v: string | null): string => (v === null ? 'null' : pinoString(v));
  let line = `{"level":"info","time":"${new Date().toISOString()}","pid":${process.pid},"component":"http","method":${pinoString(info.method)},"route":${str(info.route)},"status":${info.status},"durationMs":${Math.round(info.durationMs * 10) / 10},"keyId":${str(info.keyId)},"requestId":${pinoString(info.requestId)}`;
  if (info.traceId !== null) line += `,"traceId":${pinoString(info.traceId)}`;
  if (info.aborted) line += ',"aborted":true';
  return `${line},"msg":${pinoString(`${info.method} ${info.route ?? '(no route)'} ${info.status}`)}}\n`;
}

/**
 * A string as pino 10 writes a value (its `asString`): JSON.stringify past 100 characters or when a
 * control character is present, else quotes and backslashes escaped and everything else as is (a
 * lone surrogate included, which JSON.stringify would escape). Node 25 and later: JSON.stringify.
 */
const pinoString = Number(process.versions.node.split('.')[0]) >= 25 ? (s: string): string => JSON.stringify(s) : (s: string): string => {
  if (s.length > 100) return JSON.stringify(s);
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 32) return JSON.stringify(s);
    if (c === 34 || c === 92) {
      out += `${s.slice(last, i)}\\`;
      last = i;
    }
  }
  return `"${out}${s.slice(last)}"`;
};
