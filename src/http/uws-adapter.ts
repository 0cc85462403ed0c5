/**
 * The only module that touches uWebSockets.js requests and responses.
 *
 * uWS's HttpRequest lives only for the synchronous part of the callback and its HttpResponse becomes
 * invalid once the client goes away, so this module copies what the core needs up front, reads the body
 * with a size limit, registers onAborted before anything asynchronous happens, and writes the answer
 * (corked, one syscall) only if the client is still there. The core sees PlainRequest/PlainResponse.
 *
 * Per-request cost matters here (bench/README.md#http-read): the AbortController a handler may wait
 * on is created only if the handler reads the signal, and a synchronous answer is written before the
 * uWS callback returns.
 */
import { STATUS_CODES } from 'node:http';
import * as uws from './uws.js';
import { performance } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import { ApiError, apiError } from '../errors/catalog.js';
import { HeadDeadline, reportingRoutes } from './head-deadline.js';
import { uwsErrorBodies } from './uws-error-responses.js';
import { inspectHead } from './request-head.js';
import { CLIENT_CLOSED_STATUS, type RequestObserver } from './request-done.js';
import { requestIdFrom, traceIdFrom } from './request-id.js';
import type { ResponseStream } from '../api/stream-body.js';
import { StreamAborted, StreamWriter } from './stream-writer.js';
import { errorResponse, type AbortSource } from './router.js';
import type { PlainRequest, PlainResponse, RequestNotes } from './types.js';

/** Default largest request body, in bytes (1 MiB); larger bodies get 413 `body_too_large`. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/**
 * How long after its head a request's whole body may take to arrive; later, 408 `body_read_timeout`
 * and the connection is closed (docs/http-hardening.md).
 */
export const BODY_DEADLINE_MS = 30_000;
/** First buffer of a body that arrives in pieces; it doubles as bytes come, up to the declared length. */
const BODY_FIRST_ALLOC_BYTES = 64 * 1024;

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port; read the chosen one from the result. */
  port: number;
  /** PEM files for HTTPS, or null for plain HTTP (loopback only; the CLI enforces that). */
  tls: { certFile: string; keyFile: string } | null;
  /**
   * The router: answers synchronously or with a promise; `signal.signal` is created on first read. Its
   * `headerNames` (Router.headerNames) are the request headers copied beyond the core's.
   */
  handle: RequestHandler;
  maxBodyBytes?: number;
  /** How long a body may take to arrive after its head (default {@link BODY_DEADLINE_MS}; shorter in tests). */
  bodyDeadlineMs?: number;
  /** Adds more routes (the telemetry WebSocket) to the same app before the catch-all HTTP route. */
  configure?(app: uws.TemplatedApp): void;
  /** Where adapter-level failures (a handler that rejected, an observer that threw) are logged; never request data. */
  log?: Logger;
  /**
   * Called once per request after its answer is written, or when the client went away first
   * (request-done.ts): the access log, request metrics. Read when each request finishes, so an
   * observer pushed after start is called too.
   */
  onRequestDone?: readonly RequestObserver[];
}

/** Headers the adapter reads for every request, beyond what the router asks for. */
const CORRELATION_HEADERS = ['x-request-id', 'traceparent'] as const;

/** What serves requests: the router, or anything with its call shape. */
export interface RequestHandler {
  (req: PlainRequest, signal: AbortSource): PlainResponse | Promise<PlainResponse>;
  readonly headerNames?: ReadonlySet<string>;
  /** The route's own body limit (Router.bodyLimit), or null for the server's default. */
  bodyLimit?(method: string, path: string): number | null;
}

export interface HttpServer {
  readonly app: uws.TemplatedApp;
  readonly port: number;
  /** `https://host:port` or `http://host:port`, IPv6 hosts in brackets. */
  readonly url: string;
  /** Stops accepting connections; open ones keep being served (drain, then {@link close}). */
  stopListening(): void;
  /** Stops listening and force-closes every open connection (in-flight requests see an abort). */
  close(): void;
  /** Requests accepted and not yet answered or aborted. */
  inFlight(): number;
}

/**
 * Starts the REST server.
 * @throws Error when the address cannot be bound or the TLS files cannot be loaded
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bodyDeadlineMs = opts.bodyDeadlineMs ?? BODY_DEADLINE_MS;
  const log = opts.log ?? pino({ enabled: false });
  const observers = opts.onRequestDone ?? [];
  const app = opts.tls === null ? uws.App() : sslApp(opts.tls);
  let inFlight = 0;
  const wantedHeaders = new Set<string>([...(opts.handle.headerNames ?? []), ...CORRELATION_HEADERS]);

  // Off the start-up path: a warning, not a reason to refuse to serve.
  void uwsErrorBodies().then(
    (kind) => {
      if (kind !== 'json') {
        log.warn({ binary: uws.uwsBuild.binary, errorBodies: kind }, 'uWebSockets.js answers HTTP/1.0, oversized heads and malformed framing in HTML: run node scripts/patch-uws.mjs (docs/http-hardening.md)');
      }
    },
    (err: unknown) => log.warn({ err }, 'could not read the uWebSockets.js binary to check its error bodies'),
  );
  const headDeadline = new HeadDeadline(log);
  headDeadline.attach(app);
  opts.configure?.(reportingRoutes(app, headDeadline));
  app.any('/*', (res, req) => {
    const started = performance.now();
    inFlight++;
    let settled = false;
    // Set once `plain` exists (below, still synchronous): the completion hook reports it.
    let finished: ((status: number, aborted: boolean) => void) | null = null;
    const settle = (): void => {
      if (!settled) {
        settled = true;
        inFlight--;
      }
    };
    const abort = new LazyAbort();
    let stream: StreamWriter | null = null;
    // The body-read deadline, armed once a body arrives in more than one piece.
    let deadline: NodeJS.Timeout | null = null;
    res.onAborted(() => {
      if (deadline !== null) clearTimeout(deadline);
      const first = !settled;
      settle();
      abort.abort();
      stream?.abort();
      if (first) finished?.(CLIENT_CLOSED_STATUS, true);
    });

    const method = req.getCaseSensitiveMethod();
    const url = req.getUrl();
    const query = req.getQuery() ?? '';
    // `METHOD /path?query HTTP/1.1\r\n`
    const head = inspectHead((cb) => req.forEach(cb), method.length + url.length + query.length + 12, wantedHeaders);
    const requestId = requestIdFrom(head.headers['x-request-id']);
    const notes: RequestNotes = { route: null, keyId: null };
    const plain: PlainRequest = {
      method,
      path: url,
      query,
      headers: head.headers,
      body: EMPTY_BODY,
      remoteAddress: ADDRESS_DECODER.decode(res.getRemoteAddressAsText()),
      requestId,
      traceId: traceIdFrom(head.headers.traceparent),
      notes,
    };
    headDeadline.sawRequest(plain.remoteAddress);
    if (observers.length > 0) {
      finished = (status, aborted) => {
        const info = {
          method, route: notes.route, status, durationMs: performance.now() - started, keyId: notes.keyId, requestId, traceId: plain.traceId ?? null, aborted,
        };
        for (const observe of observers) {
          try {
            observe(info);
          } catch (err: unknown) {
            log.error({ err, requestId }, 'request observer failed');
          }
        }
      };
    }
    /** A streamed body: headers now, then the producer's chunks; settled when it ends. */
    const writeStream = (out: PlainResponse, body: ResponseStream): void => {
      if (settled) {
        body.unused();
        return;
      }
      const writer = new StreamWriter(res);
      stream = writer;
      res.cork(() => {
        res.writeStatus(statusLine(out.status));
        for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
        res.writeHeader('x-request-id', requestId);
      });
      body.produce(writer).then(
        () => {
          if (settled) return;
          settle();
          writer.end();
          finished?.(out.status, false);
        },
        (err: unknown) => {
          if (settled) return;
          if (!(err instanceof StreamAborted)) log.error({ err, requestId, route: notes.route }, 'streamed response failed after its headers: connection closed');
          settle();
          writer.fail();
          finished?.(out.status, true);
        },
      );
    };
    const write = (out: PlainResponse, closeConnection = false): void => {
      if (settled) {
        out.stream?.unused();
        return;
      }
      // A HEAD answer to a streamed GET is its headers alone (`body` is '').
      if (out.stream !== undefined && plain.method !== 'HEAD') {
        writeStream(out, out.stream);
        return;
      }
      out.stream?.unused();
      const bytes = out.body;
      settle();
      res.cork(() => {
        res.writeStatus(statusLine(out.status));
        for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
        res.writeHeader('x-request-id', requestId);
        if (plain.method !== 'HEAD') {
          res.end(bytes, closeConnection);
        } else if (closeConnection) {
          // An error that closes the connection: nothing can follow, an empty body is enough.
          res.end('', true);
        } else {
          // A HEAD answer has the GET answer's headers and no body: a body here would be read as the
          // start of the next response on a keep-alive connection. uWS adds no Content-Length to a
          // bodiless end, so it is written here. (endWithoutBody(length) would write it, but leaves the
          // response pending in uws-pack 20.0.8: the next request on the connection then closes it.)
          // A streamed GET has no length to announce (it is sent chunked).
          if (out.stream === undefined) res.writeHeader('content-length', String(Buffer.byteLength(bytes)));
          res.endWithoutBody();
        }
      });
      finished?.(out.status, false);
    };
    const dispatch = (body: Buffer): void => {
      plain.body = body;
      const fail = (err: unknown): void => {
        log.error({ err, requestId, route: notes.route }, 'http handler failed');
        write(errorResponse(err instanceof ApiError ? err : apiError('internal')));
      };
      try {
        const out = opts.handle(plain, abort);
        if (out instanceof Promise) out.then((o) => write(o), fail);
        else write(out);
      } catch (err: unknown) {
        // A handler that throws before returning its promise must not take the uWS callback down.
        fail(err);
      }
    };

    if (head.problem !== null) {
      if (!head.problem.framing) {
        // Framed correctly, so the connection can stay, unless a body would follow unread.
        write(errorResponse(head.problem.error), head.hasBody);
        return;
      }
      // The bytes after this header block cannot be trusted (they may be a smuggled request). An
      // answer written now would not stop uWS from parsing them: it goes on with whatever is already
      // in its read buffer before our close takes effect. So the answer waits one macrotask, during
      // which the response is pending, and uWS closes a connection that sends another request while a
      // response is pending, before any handler sees that request. With nothing behind the header
      // block, the client gets the 400 and the connection is closed.
      const answer = errorResponse(head.problem.error);
      res.onData(() => {});
      setImmediate(() => write(answer, true));
      return;
    }
    if (!head.hasBody) {
      dispatch(EMPTY_BODY);
      return;
    }
    // The route's own bound, known before a byte of the body is buffered.
    const limit = Math.min(maxBody, opts.handle.bodyLimit?.(method, url) ?? maxBody);
    if (head.contentLength !== null && head.contentLength > limit) {
      // The unread body is still on the wire: answer and close rather than drain it.
      write(errorResponse(apiError('body_too_large', { limit })), true);
      return;
    }
    // Every body here has a Content-Length (a chunked one is a framing error, request-head.ts). A body
    // that arrives whole is copied once, into a buffer of its size; one that arrives in pieces grows
    // from BODY_FIRST_ALLOC_BYTES, so a slow sender reserves only what it has sent.
    const declared = head.contentLength ?? limit;
    let body: Buffer | null = null;
    let size = 0;
    res.onData((chunk, isLast) => {
      if (settled) return;
      if (size + chunk.byteLength > declared) {
        body = null;
        write(errorResponse(apiError('body_too_large', { limit })), true);
        return;
      }
      const end = size + chunk.byteLength;
      if (body === null) {
        body = Buffer.allocUnsafe(isLast ? end : Math.min(declared, Math.max(end, BODY_FIRST_ALLOC_BYTES)));
      } else if (end > body.length) {
        const grown = Buffer.allocUnsafe(Math.min(declared, Math.max(end, body.length * 2)));
        body.copy(grown, 0, 0, size);
        body = grown;
      }
      // uWS reuses (neuters) the chunk's memory after this callback returns, so copy it.
      body.set(new Uint8Array(chunk), size);
      size = end;
      if (isLast) {
        if (deadline !== null) clearTimeout(deadline);
        dispatch(size === body.length ? body : body.subarray(0, size));
        return;
      }
      // uWS's idle timeout restarts with every byte, so a body sent a byte at a time would hold its
      // buffer for ever: the whole body must arrive within bodyDeadlineMs of the head.
      if (deadline === null) {
        const left = Math.max(0, bodyDeadlineMs - (performance.now() - started));
        // Decided one turn later, as the head deadline is: bytes already read in a stalled loop count.
        deadline = setTimeout(() => setImmediate(() => {
          if (settled) return;
          body = null;
          write(errorResponse(apiError('body_read_timeout', { seconds: bodyDeadlineMs / 1000 })), true);
        }), left);
        deadline.unref();
      }
    });
  });

  const listenSocket = await new Promise<uws.us_listen_socket>((resolve, reject) => {
    app.listen(opts.host, opts.port, (sock) => {
      if (sock === false) reject(new Error(`cannot listen on ${opts.host}:${opts.port}`));
      else resolve(sock);
    });
  });
  const port = uws.us_socket_local_port(listenSocket);
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let listening = true;
  let closed = false;
  const stopListening = (): void => {
    if (!listening) return;
    listening = false;
    uws.us_listen_socket_close(listenSocket);
  };
  return {
    app,
    port,
    url: `${opts.tls === null ? 'http' : 'https'}://${hostForUrl}:${port}`,
    stopListening,
    close(): void {
      if (closed) return;
      closed = true;
      stopListening();
      app.close();
    },
    inFlight: () => inFlight,
  };
}

/** uWS's HTTPS app; its only error is `App construction failed`, so this one names the files. */
function sslApp(tls: { certFile: string; keyFile: string }): uws.TemplatedApp {
  try {
    return uws.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile });
  } catch (err: unknown) {
    throw new Error(
      `HTTP server: TLS certificate ${tls.certFile} and key ${tls.keyFile} could not be loaded (${err instanceof Error ? err.message : String(err)}): both must be PEM, the key must match the certificate`,
      { cause: err },
    );
  }
}

// An address is ASCII text; TextDecoder reads uWS's ArrayBuffer without wrapping it in a Buffer first.
const ADDRESS_DECODER = new TextDecoder();

/** Shared by every request without a body (zero bytes: nothing to mutate). */
const EMPTY_BODY = Buffer.alloc(0);

const statusLines = new Map<number, string>();

/** `200 OK`, built once per status code. */
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? ''}`;
    statusLines.set(status, line);
  }
  return line;
}

/**
 * A request's abort state. Most handlers never wait, so the AbortController (a few microseconds per
 * request) is created only when a handler reads `signal`; one read after the client left gets an
 * already-aborted signal.
 */
class LazyAbort {
  private controller: AbortController | null = null;
  private aborted = false;

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}
