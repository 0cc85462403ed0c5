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
 * - bounds per credential, per organization and in all, and which session is closed to make room
 *   for a new one or why it is refused: mcp-session-bounds.ts (429 `mcp_session_quota` for the
 *   credential's and organization's bounds, 503 `mcp_sessions_full` for the gateway's, Retry-After);
 * - a session without work (a request other than ping) for `timeoutMs` is closed, however often it
 *   pings; its id then gets 404 and the client initializes again, as the protocol prescribes.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { pino, type Logger } from 'pino';
import { authInfoFor, type McpAnswer, type McpExchange } from '../api/mcp/exchange.js';
import { apiError } from '../errors/catalog.js';
import { isWork, roomFor, type BoundedSession, type McpSessionBound, type McpSessionLimits } from './mcp-session-bounds.js';

export type { McpSessionLimits } from './mcp-session-bounds.js';

interface Session extends BoundedSession {
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
}

const BOUND_NAMES: Record<McpSessionBound, string> = { credential: 'per-credential', organization: 'per-organization', gateway: 'gateway-wide' };

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
    private readonly limits: McpSessionLimits,
    private readonly now: () => number = Date.now,
    private readonly log: Logger = pino({ enabled: false }),
  ) {
    this.sweep = setInterval(() => this.closeIdle(), Math.max(1_000, Math.min(limits.timeoutMs / 4, 30_000)));
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

  /** Closes sessions without work for longer than the timeout; run by the sweep timer and before each initialize. */
  closeIdle(): void {
    for (const s of this.sessions.values()) if (this.timedOut(s)) this.drop(s);
  }

  private timedOut(s: Session): boolean {
    return s.busy === 0 && s.lastWorkMs <= this.now() - this.limits.timeoutMs;
  }

  private sessionOf(ex: McpExchange): Session {
    let s = ex.sessionId === undefined ? undefined : this.sessions.get(ex.sessionId);
    // Timed out but not swept yet: gone all the same, so the timeout is exact whatever the sweep period.
    if (s !== undefined && this.timedOut(s)) {
      this.drop(s);
      s = undefined;
    }
    // Another credential's session is reported exactly like an unknown one.
    if (s === undefined || s.owner !== ex.owner) throw this.notFound();
    return s;
  }

  // The id is a bearer of the session: it is never echoed in an error body or a log line.
  private notFound(): Error {
    return apiError('mcp_session_not_found', { timeoutS: Math.round(this.limits.timeoutMs / 1000) });
  }

  private async open(ex: McpExchange): Promise<McpAnswer> {
    this.makeRoom(ex.owner, ex.org);
    const id = randomUUID();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, enableJsonResponse: true });
    const server = this.newServer();
    // Registered before the first await, so concurrent initializes cannot overshoot the bounds; busy
    // while it connects, so making room for another session cannot pick it before it has served once.
    const s: Session = { id, owner: ex.owner, org: ex.org, transport, server, lastWorkMs: this.now(), busy: 1 };
    this.sessions.set(id, s);
    try {
      try {
        await server.connect(transport);
      } finally {
        s.busy--;
      }
      const answer = await this.serve(s, ex);
      if (answer.headers['mcp-session-id'] !== id) this.drop(s);
      return answer;
    } catch (err: unknown) {
      this.drop(s);
      throw err;
    }
  }

  /**
   * Frees a slot for a session of `owner` in `org`, closing what the bounds name.
   * @throws ApiError `mcp_session_quota` (credential, organization) or `mcp_sessions_full` (gateway)
   */
  private makeRoom(owner: string, org: string): void {
    this.closeIdle();
    // Each round closes one session, so this ends; one round is enough while the table is within its bounds.
    for (;;) {
      const room = roomFor(this.sessions.values(), owner, org, this.limits, this.now());
      if (room.kind === 'free') return;
      if (room.kind === 'evict') {
        this.log.debug({ owner: room.session.owner, org: room.session.org, bound: room.bound, forOwner: owner, forOrg: org }, 'MCP session closed to make room');
        this.drop(room.session);
        continue;
      }
      const { bound, max, retryAfterS } = room;
      const extra = { headers: { 'retry-after': String(retryAfterS) }, details: { bound, max, retryAfterS } };
      if (bound === 'gateway') throw apiError('mcp_sessions_full', { max, retryAfterS }, extra);
      throw apiError('mcp_session_quota', { bound: BOUND_NAMES[bound], max, retryAfterS }, extra);
    }
  }

  private async serve(s: Session, ex: McpExchange): Promise<McpAnswer> {
    const headers = new Headers(FIXED_HEADERS);
    if (ex.sessionId !== undefined) headers.set('mcp-session-id', ex.sessionId);
    if (ex.protocolVersion !== undefined) headers.set('mcp-protocol-version', ex.protocolVersion);
    // Pings and notifications keep the transport answering, not the session in use (mcp-session-bounds.ts).
    const work = isWork(ex.message);
    s.busy++;
    if (work) s.lastWorkMs = this.now();
    try {
      const res = await s.transport.handleRequest(new Request(ENDPOINT_URL, { method: 'POST', headers }), { parsedBody: ex.message, authInfo: authInfoFor(ex.call) });
      return await answerOf(res, () => this.notFound());
    } finally {
      s.busy--;
      if (work) s.lastWorkMs = this.now();
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
      this.log.warn({ err, org: s.org }, 'closing an MCP session failed');
    }
  }
}

/** The SDK's Response as an answer; its refusals (JSON-RPC error bodies) become catalog errors. */
async function answerOf(res: Response, notFound: () => Error): Promise<McpAnswer> {
  const headers: Record<string, string> = {};
  const sid = res.headers.get('mcp-session-id');
  if (sid !== null) headers['mcp-session-id'] = sid;
  if (res.status === 202) return { status: 202, headers, body: null };
  // JSON mode: the body is one JSON text the SDK built in memory, never a stream.
  const text = await res.text();
  if (res.status === 200) return { status: 200, headers, body: text };
  if (res.status === 404) throw notFound();
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
