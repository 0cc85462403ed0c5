/**
 * The MCP Streamable HTTP transport of `/v1/mcp`: a bounded table of sessions, each the SDK's
 * web-standard transport (`WebStandardStreamableHTTPServerTransport`, Request in, Response out) with
 * its own tool server. uWS is not node:http, so nothing here touches a socket: the router has already
 * read the body (bounded by the adapter's body limit), authenticated and validated it; this module
 * builds a `Request` around the parsed message (`parsedBody`: the SDK reads no body) and turns the
 * `Response` back into JSON text.
 *
 * Answers are always JSON (`enableJsonResponse`): a POST holds its HTTP request open until its answer
 * is ready and no SSE stream is ever opened (GET is not routed: 405), so the only per-client state is
 * the session itself. Policy (docs/mcp.md):
 * - a session answers only to the credential that opened it (another one gets 404, as for an unknown id);
 * - at most `maxPerOwner` sessions per credential: opening one more closes that credential's least
 *   recently used idle session (a client that forgets DELETE evicts its own sessions, nobody else's);
 * - at most `maxSessions` in all: past that, initialize is refused (503 `mcp_sessions_full`, Retry-After);
 * - a session idle (no request running) for `idleMs` is closed; its id then gets 404 and the client
 *   initializes again, as the protocol prescribes.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { pino, type Logger } from 'pino';
import { authInfoFor, type McpAnswer, type McpExchange } from '../api/mcp/exchange.js';
import { apiError } from '../errors/catalog.js';

export interface McpSessionLimits {
  /** Sessions in all. */
  maxSessions: number;
  /** Sessions per credential. */
  maxPerOwner: number;
  /** A session without a request for this long is closed (ms). */
  idleMs: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = Object.freeze({ maxSessions: 256, maxPerOwner: 16, idleMs: 10 * 60_000 });

interface Session {
  id: string;
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastUsedMs: number;
  /** Requests of this session in progress: a busy session is neither idle nor evicted. */
  busy: number;
}

/** The URL the SDK sees (it reads only the path and headers; the host is never used). */
const ENDPOINT_URL = 'http://fleet-gateway/v1/mcp';
/** The router checked Content-Type, and answers are JSON whatever the client accepts: the SDK's checks are satisfied here. */
const FIXED_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' } as const;

/** The session table; see the module comment. */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  /**
   * @param newServer a fresh tool server for each session (src/api/mcp/tool-server.ts)
   */
  constructor(
    private readonly newServer: () => Server,
    private readonly limits: McpSessionLimits = DEFAULT_MCP_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly log: Logger = pino({ enabled: false }),
  ) {
    this.sweep = setInterval(() => this.closeIdle(), Math.max(1_000, Math.min(limits.idleMs / 4, 30_000)));
    this.sweep.unref();
  }

  /** Sessions open now. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Serves one `/v1/mcp` request.
   * @throws ApiError `mcp_session_required`, `mcp_session_not_found`, `mcp_sessions_full`, `mcp_transport`
   */
  async handle(ex: McpExchange): Promise<McpAnswer> {
    if (this.closed) throw apiError('shutting_down');
    if (ex.method === 'DELETE') {
      const s = this.sessionOf(ex);
      this.drop(s);
      return { status: 204, headers: {}, body: null };
    }
    if (ex.sessionId === undefined) {
      if (!isInitialize(ex.message)) throw apiError('mcp_session_required');
      return this.open(ex);
    }
    const s = this.sessionOf(ex);
    return this.serve(s, ex);
  }

  /** Closes every session (gateway shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => this.closeQuietly(s)));
  }

  /** Closes sessions idle for longer than the limit; run by the sweep timer. */
  closeIdle(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const s of this.sessions.values()) if (s.busy === 0 && s.lastUsedMs <= cutoff) this.drop(s);
  }

  private sessionOf(ex: McpExchange): Session {
    const s = ex.sessionId === undefined ? undefined : this.sessions.get(ex.sessionId);
    // Another credential's session is reported exactly like an unknown one.
    if (s === undefined || s.owner !== ex.owner) {
      throw apiError('mcp_session_not_found', { sessionId: ex.sessionId ?? '', idleS: Math.round(this.limits.idleMs / 1000) });
    }
    return s;
  }

  private async open(ex: McpExchange): Promise<McpAnswer> {
    this.makeRoom(ex.owner);
    const id = randomUUID();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, enableJsonResponse: true });
    const server = this.newServer();
    // Registered before the first await, so concurrent initializes cannot overshoot the bounds.
    const s: Session = { id, owner: ex.owner, transport, server, lastUsedMs: this.now(), busy: 0 };
    this.sessions.set(id, s);
    try {
      await server.connect(transport);
      const answer = await this.serve(s, ex);
      if (answer.headers['mcp-session-id'] !== id) this.drop(s);
      return answer;
    } catch (err: unknown) {
      this.drop(s);
      throw err;
    }
  }

  /** Frees a slot for `owner`, or throws `mcp_sessions_full`. */
  private makeRoom(owner: string): void {
    let mine = 0;
    let oldestIdle: Session | undefined;
    for (const s of this.sessions.values()) {
      if (s.owner !== owner) continue;
      mine++;
      if (s.busy === 0 && (oldestIdle === undefined || s.lastUsedMs < oldestIdle.lastUsedMs)) oldestIdle = s;
    }
    if (mine >= this.limits.maxPerOwner) {
      if (oldestIdle === undefined) throw this.full();
      this.drop(oldestIdle);
    }
    if (this.sessions.size >= this.limits.maxSessions) {
      this.closeIdle();
      if (this.sessions.size >= this.limits.maxSessions) throw this.full();
    }
  }

  private full(): Error {
    const retryAfterS = Math.max(1, Math.ceil(Math.min(this.limits.idleMs, 60_000) / 1000));
    return apiError('mcp_sessions_full', { max: this.limits.maxSessions, retryAfterS }, { headers: { 'retry-after': String(retryAfterS) } });
  }

  private async serve(s: Session, ex: McpExchange): Promise<McpAnswer> {
    const headers = new Headers(FIXED_HEADERS);
    if (ex.sessionId !== undefined) headers.set('mcp-session-id', ex.sessionId);
    if (ex.protocolVersion !== undefined) headers.set('mcp-protocol-version', ex.protocolVersion);
    s.busy++;
    s.lastUsedMs = this.now();
    try {
      const res = await s.transport.handleRequest(new Request(ENDPOINT_URL, { method: 'POST', headers }), { parsedBody: ex.message, authInfo: authInfoFor(ex.call) });
      return await answerOf(res, s, this.limits.idleMs);
    } finally {
      s.busy--;
      s.lastUsedMs = this.now();
    }
  }

  private drop(s: Session): void {
    if (this.sessions.get(s.id) !== s) return;
    this.sessions.delete(s.id);
    void this.closeQuietly(s);
  }

  private async closeQuietly(s: Session): Promise<void> {
    try {
      await s.server.close();
    } catch (err: unknown) {
      this.log.warn({ err, sessionId: s.id }, 'closing an MCP session failed');
    }
  }
}

/** The SDK's Response as an answer; its refusals (JSON-RPC error bodies) become catalog errors. */
async function answerOf(res: Response, s: Session, idleMs: number): Promise<McpAnswer> {
  const headers: Record<string, string> = {};
  const sid = res.headers.get('mcp-session-id');
  if (sid !== null) headers['mcp-session-id'] = sid;
  if (res.status === 202) return { status: 202, headers, body: null };
  // JSON mode: the body is one JSON text the SDK built in memory, never a stream.
  const text = await res.text();
  if (res.status === 200) return { status: 200, headers, body: text };
  if (res.status === 404) throw apiError('mcp_session_not_found', { sessionId: s.id, idleS: Math.round(idleMs / 1000) });
  throw apiError('mcp_transport', { detail: transportProblem(text, res.status) });
}

function transportProblem(text: string, status: number): string {
  let message = `HTTP ${status}`;
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') message = m;
  } catch {
    // Not JSON: the status alone.
  }
  // eslint-disable-next-line no-control-regex
  const clean = message.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

function isInitialize(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'initialize';
}
