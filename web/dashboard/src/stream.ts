/**
 * The live telemetry stream (docs/telemetry-stream.md). The ticket goes in the first WebSocket
 * message, never in the URL: URLs end up in proxy logs and browser history. A closed socket is
 * reopened with a new ticket (tickets are single use) after a pause, unless the page closed it.
 */
import type { Api } from './api.js';
import type { Alert, LiveSample } from './types.js';

export interface StreamHandlers {
  sample(s: LiveSample): void;
  alert(change: string, a: Alert): void;
  /** Samples or alerts were dropped for a slow reader: re-read what the page shows from REST. */
  dropped(count: number): void;
  status(state: 'connecting' | 'live' | 'closed', detail?: string): void;
  /** The gateway closed the stream because the session ended (logout elsewhere, expiry, revocation). */
  ended(): void;
}

const RECONNECT_MS = 2_000;

export class LiveStream {
  private ws: WebSocket | null = null;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly api: Api,
    private readonly orgId: string,
    private readonly fleetId: string,
    private readonly on: StreamHandlers,
    /** Samples per second per robot the gateway sends at most (server-side decimation; null: all). */
    private readonly maxHz: () => number | null = () => null,
  ) {}

  /** Opens the socket (asks for a ticket first). */
  start(): void {
    this.stopped = false;
    void this.open();
  }

  /** Closes the socket for good (logout, another fleet). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.ws?.close(1000, 'dashboard closed the stream');
    this.ws = null;
  }

  private async open(): Promise<void> {
    this.on.status('connecting');
    let ticket: string;
    try {
      ticket = (await this.api.post<{ ticket: string }>('/v1/telemetry/stream-tickets', { org_id: this.orgId, fleet_id: this.fleetId })).ticket;
    } catch (err) {
      this.retry(`no ticket: ${(err as Error).message}`);
      return;
    }
    if (this.stopped) return;
    // Same origin as the page (so connect-src 'self' covers it); the ticket is not part of it.
    const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/v1/telemetry/stream`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ op: 'subscribe', ticket, encoding: 'json', max_hz: this.maxHz() }));
    ws.onmessage = (e: MessageEvent<string>) => this.message(e.data);
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.on.status('closed', `${e.code} ${e.reason}`);
      if (e.code === 4403 || e.code === 4401) {
        // The session ended (logout elsewhere, expiry, revocation): a new ticket would be refused too.
        this.stopped = true;
        this.on.ended();
        return;
      }
      this.retry(`closed ${e.code}`);
    };
  }

  private message(data: string): void {
    let m: { op?: string; change?: string; alert?: Alert; count?: number };
    try {
      m = JSON.parse(data) as typeof m;
    } catch {
      return;
    }
    if (m.op === 'sample') this.on.sample(m as unknown as LiveSample);
    else if (m.op === 'alert' && m.alert !== undefined) this.on.alert(m.change ?? '', m.alert);
    else if (m.op === 'dropped') this.on.dropped(m.count ?? 0);
    else if (m.op === 'subscribed') this.on.status('live');
  }

  private retry(detail: string): void {
    if (this.stopped) return;
    this.on.status('closed', detail);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) void this.open();
    }, RECONNECT_MS);
  }
}
