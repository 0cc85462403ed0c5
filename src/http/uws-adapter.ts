/**
 * The only module that touches uWebSockets.js requests and responses.
 *
 * uWS's HttpRequest lives only for the synchronous part of the callback and its HttpResponse becomes
 * invalid once the client goes away, so this module copies what the core needs up front, reads the body
 * with a size limit, registers onAborted before anything asynchronous happens, and writes the answer
 * (corked, one syscall) only if the client is still there. The core sees PlainRequest/PlainResponse.
 */
import { STATUS_CODES } from 'node:http';
import * as uws from 'uWebSockets.js';
import { ApiError, apiError } from '../errors/catalog.js';
import { errorResponse } from './router.js';
import type { PlainRequest, PlainResponse } from './types.js';

/** Default largest request body, in bytes (1 MiB); larger bodies get 413 `body_too_large`. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port; read the chosen one from the result. */
  port: number;
  /** PEM files for HTTPS, or null for plain HTTP (loopback only; the CLI enforces that). */
  tls: { certFile: string; keyFile: string } | null;
  handle(req: PlainRequest, signal: AbortSignal): Promise<PlainResponse>;
  maxBodyBytes?: number;
  /** Adds more routes (the telemetry WebSocket) to the same app before the catch-all HTTP route. */
  configure?(app: uws.TemplatedApp): void;
  /** Sink for adapter-level failures (a handler that rejected); never receives request data. */
  log?: (line: string) => void;
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
  const log = opts.log ?? ((): void => {});
  const app = opts.tls === null ? uws.App() : uws.SSLApp({ cert_file_name: opts.tls.certFile, key_file_name: opts.tls.keyFile });
  let inFlight = 0;

  opts.configure?.(app);
  app.any('/*', (res, req) => {
    inFlight++;
    let settled = false;
    const settle = (): void => {
      if (!settled) {
        settled = true;
        inFlight--;
      }
    };
    const controller = new AbortController();
    res.onAborted(() => {
      settle();
      controller.abort();
    });

    const plain = copyRequest(res, req);
    const declared = req.getHeader('content-length');
    const hasBody = declared !== '' ? declared !== '0' : req.getHeader('transfer-encoding') !== '';
    const write = (out: PlainResponse, closeConnection = false): void => {
      if (settled) return;
      settle();
      res.cork(() => {
        res.writeStatus(`${out.status} ${STATUS_CODES[out.status] ?? ''}`);
        for (const [k, v] of Object.entries(out.headers)) res.writeHeader(k, v);
        res.end(out.body, closeConnection);
      });
    };
    const dispatch = (body: Buffer): void => {
      plain.body = body;
      const fail = (err: unknown): void => {
        log(`http handler failed: ${err instanceof Error ? err.message : String(err)}`);
        write(errorResponse(err instanceof ApiError ? err : apiError('internal')));
      };
      try {
        opts.handle(plain, controller.signal).then((out) => write(out), fail);
      } catch (err: unknown) {
        // A handler that throws before returning its promise must not take the uWS callback down.
        fail(err);
      }
    };

    if (declared !== '' && Number(declared) > maxBody) {
      // The unread body is still on the wire: answer and close rather than drain it.
      write(errorResponse(apiError('body_too_large', { limit: maxBody })), true);
      return;
    }
    if (!hasBody) {
      dispatch(Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > maxBody) {
        chunks.length = 0;
        write(errorResponse(apiError('body_too_large', { limit: maxBody })), true);
        return;
      }
      // uWS reuses (neuters) the chunk's memory after this callback returns, so copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
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

function copyRequest(res: uws.HttpResponse, req: uws.HttpRequest): PlainRequest {
  const headers: PlainRequest['headers'] = {};
  const authorization = req.getHeader('authorization');
  if (authorization !== '') headers.authorization = authorization;
  const contentType = req.getHeader('content-type');
  if (contentType !== '') headers['content-type'] = contentType;
  const idempotencyKey = req.getHeader('idempotency-key');
  if (idempotencyKey !== '') headers['idempotency-key'] = idempotencyKey;
  return {
    method: req.getCaseSensitiveMethod(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    body: Buffer.alloc(0),
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString('utf8'),
  };
}
