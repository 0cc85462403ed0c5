/**
 * The gateway's Prometheus metrics: one prom-client Registry per gateway (never prom-client's global
 * one, so two gateways in one process, as the tests start them, keep apart), built by the composition
 * root and handed to the parts that record into it. Names and meanings: docs/operations.md,
 * "Metrics and health".
 *
 * Cost on the hot paths: what the pipeline already counts (frames, samples, rows, stream drops,
 * outbox size) is read from its stats when Prometheus scrapes, so telemetry pays nothing per sample;
 * what happens per event (an HTTP request, an insert, a command state change, a fire) is one
 * increment of a plain number, or of a histogram bucket's count, in a slot cached by its label key;
 * each metric's `collect()` folds what gathered into prom-client when Prometheus scrapes (prom-client's
 * own inc/observe validate and hash the labels on every call, a visible share of an HTTP read's CPU:
 * bench/README.md#http-read). The exposition is the same series either way. Labels have bounded values only:
 * route templates (not paths), HTTP methods folded to a fixed set, status codes, command actions and
 * delivery states; never a robot, fleet or key id.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One finished HTTP request, as the router reports it (the route template, not the path). */
export interface HttpRequestDone {
  method: string;
  /** The matched route's template (`/v1/robots/{robot_id}`); null when no route matched. */
  route: string | null;
  status: number;
  durationMs: number;
}

/** Counters a part of the gateway keeps itself and the registry reads at scrape time. */
export interface ScrapeSources {
  telemetry: () => {
    framesIn: number;
    bytesIn: number;
    samplesIn: number;
    rowsWritten: number;
    rowsSpooled: number;
    rowsReplayed: number;
    spoolBytes: number;
    spoolBacklog: number;
    spoolFullWaits: number;
    duplicateBatches: number;
    corruptFrames: number;
    /** By reason, in {@link ScrapeSources.boundReasons} order. */
    boundedValues: readonly number[];
    framesLost: number;
    framesRejected: number;
    batches: number;
    batchesInline: number;
    queueBytes: number;
    insertsInFlight: number;
    paused: boolean;
  };
  /** The reasons a robot string is bounded at ingest (the telemetry field table's BOUND_REASONS). */
  boundReasons: readonly string[];
  /** Robots with a live control stream. */
  robotsOnline: () => number;
  /** Commands in the outbox (not yet acknowledged, resends pending). */
  commandsPending: () => number;
  stream: () => { sockets: number; droppedSamples: number };
  /** Schedules armed in the scheduler's timer heap. */
  schedulesArmed: () => number;
  /** Each readiness check's current answer (docs/operations.md: what /readyz checks). */
  readiness: () => Readonly<Record<string, boolean>>;
  /** The telemetry store answers and is set up (store-health.ts); absent: the gauge is not published. */
  storeUp?: () => boolean;
  /** Alerts open or acknowledged, all fleets (docs/alerts.md); absent: the gauge is not published. */
  alertsUnresolved?: () => number;
  /** Every command action: `fleetgw_commands_total` starts at 0 for each (action, delivery state). */
  commandActions?: readonly string[];
  /** notAfter of the served TLS certificate, Unix seconds; absent (plain HTTP): the gauge is not published. */
  certificateExpirySeconds?: number;
  /**
   * Alert webhook delivery (docs/webhooks.md): running totals by outcome (every outcome in
   * `outcomeNames` is published from zero), jobs queued, dead letters dropped by the bound. Absent: not published.
   */
  webhooks?: { outcomeNames: readonly string[]; read: () => { outcomes: Readonly<Record<string, number>>; queued: number; deadLettersDropped: number } };
  /**
   * VDA 5050 inbound messages (docs/vda5050.md, "Bad input"): accepted, refused by reason (in
   * `reasons` order; every reason is published from zero), headerId sessions restarted. Absent: not published.
   */
  vda5050Inbound?: { reasons: readonly string[]; read: () => { accepted: number; rejected: readonly number[]; headerResets: number } };
}

/** The delivery states `fleetgw_commands_total` counts (docs/operations.md, "The series"). */
const COMMAND_STATES = ['deferred', 'dispatched', 'agent_received', 'agent_rejected'] as const;

// Methods the router serves; anything else a client sends is folded into `other` (bounded labels).
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Sampling period of the event-loop delay histogram. Its timer wakes the loop every period whatever
 * the load: prom-client's default 10 ms kept an idle gateway waking for nothing. The histogram records the
 * whole interval between two ticks, so the lag gauges' floor is this period (0.02 s), well under the
 * documented alert (p99 > 0.1 s, docs/operations.md); 100 ms would have made that alert always fire.
 */
const LOOP_DELAY_RESOLUTION_MS = 20;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const ACK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64];
const LATENESS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 60, 300, 3600];

/** The registry and the recorders the gateway's parts call. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly commandStates: Counter<'action' | 'state'>;
  private readonly ackSeconds: Histogram<'outcome'>;
  private readonly inserts: Counter<'outcome'>;
  private readonly insertSeconds: Histogram<'outcome'>;
  private readonly lateness: Histogram<'outcome'>;
  private readonly pauses: Counter;
  private readonly storeWriteFailures: Counter<'owner'>;
  /** Per label set, what gathered since the last scrape, by key (see the file's comment). */
  private readonly slots = new Map<string, CounterSlot | HistogramSlot>();
  private readonly counterSlots: CounterSlot[] = [];
  private readonly histogramSlots: HistogramSlot[] = [];

  constructor(sources: ScrapeSources) {
    const registers = [this.registry];
    // process_* (CPU, memory, open fds) and nodejs_* (heap, GC, event-loop lag from
    // monitorEventLoopDelay: nodejs_eventloop_lag_p99_seconds and friends).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: LOOP_DELAY_RESOLUTION_MS });

    this.httpRequests = new Counter({ name: 'fleetgw_http_requests_total', help: 'REST requests answered, by method, route template and status.', labelNames: ['method', 'route', 'status'], registers, collect: () => this.fold() });
    this.storeWriteFailures = new Counter({ name: 'fleetgw_store_write_failures_total', help: 'LMDB writes issued without waiting for them that failed, by owning module (each is also logged).', labelNames: ['owner'], registers, collect: () => this.fold() });
    this.httpDuration = new Histogram({ name: 'fleetgw_http_request_duration_seconds', help: 'Time from routing a REST request to its answer (body already read), by method and route template.', labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers, collect: () => this.fold() });

    this.commandStates = new Counter({ name: 'fleetgw_commands_total', help: 'Robot commands entering each delivery state (dispatched, deferred, agent_received, agent_rejected), by action.', labelNames: ['action', 'state'], registers, collect: () => this.fold() });
    this.ackSeconds = new Histogram({ name: 'fleetgw_command_ack_seconds', help: 'Time from a command\'s first send to the robot\'s ack, by outcome (received, rejected).', labelNames: ['outcome'], buckets: ACK_BUCKETS, registers, collect: () => this.fold() });
    gaugeFrom(registers, 'fleetgw_commands_pending', 'Commands in the outbox: not yet acknowledged by their robot.', sources.commandsPending);
    gaugeFrom(registers, 'fleetgw_robots_online', 'Robots with a live control stream (their Hello done).', sources.robotsOnline);
    if (sources.alertsUnresolved !== undefined) gaugeFrom(registers, 'fleetgw_alerts_unresolved', 'Alerts open or acknowledged (not yet resolved), all fleets.', sources.alertsUnresolved);
    const hooks = sources.webhooks;
    if (hooks !== undefined) {
      const w = cachedRead(hooks.read);
      labelledCounterFrom(registers, 'fleetgw_webhook_deliveries_total', 'Alert webhook delivery attempts and give-ups, by outcome: delivered, retried (an attempt failed, another follows), dead_lettered (attempts exhausted), queue_full (the organization\'s queue was full: dead-lettered at once), webhook_removed (removed while a delivery waited).', 'outcome',
        Object.fromEntries(hooks.outcomeNames.map((o) => [o, () => w().outcomes[o] ?? 0])));
      gaugeFrom(registers, 'fleetgw_webhook_queued', 'Alert webhook deliveries queued, in flight or waiting to retry, all organizations.', () => w().queued);
      counterFrom(registers, 'fleetgw_webhook_dead_letters_dropped_total', 'Webhook dead letters dropped because an organization\'s list was full (oldest first).', () => w().deadLettersDropped);
    }

    const vda = sources.vda5050Inbound;
    if (vda !== undefined) {
      const v = cachedRead(vda.read);
      counterFrom(registers, 'fleetgw_vda5050_messages_accepted_total', 'VDA 5050 messages from robots that passed the inbound checks (size, JSON, version, identity, schema, headerId order).', () => v().accepted);
      labelledCounterFrom(registers, 'fleetgw_vda5050_messages_rejected_total', 'VDA 5050 messages from robots refused before anything read them, by reason: too_large, unknown_topic, not_json, wrong_version, wrong_identity, schema, out_of_order, gate_error (a bug).', 'reason',
        Object.fromEntries(vda.reasons.map((name, i) => [name, () => v().rejected[i] ?? 0])));
      counterFrom(registers, 'fleetgw_vda5050_header_resets_total', 'VDA 5050 robot topics whose headerIds started again after the robot announced a new session (connection ONLINE): a robot restart.', () => v().headerResets);
    }

    const t = cachedRead(sources.telemetry);
    counterFrom(registers, 'fleetgw_telemetry_frames_received_total', 'TelemetryBatch messages received from robots.', () => t().framesIn);
    counterFrom(registers, 'fleetgw_telemetry_bytes_received_total', 'Bytes of TelemetryBatch messages received from robots.', () => t().bytesIn);
    counterFrom(registers, 'fleetgw_telemetry_samples_received_total', 'Samples decoded from received batches (each becomes one row).', () => t().samplesIn);
    counterFrom(registers, 'fleetgw_telemetry_samples_stored_total', 'Samples the telemetry store accepted (inserted rows).', () => t().rowsWritten);
    // The disk spool replaces dead-letter files; nothing is given up by the gateway.
    counterFrom(registers, 'fleetgw_telemetry_samples_spooled_total', 'Samples whose insert failed (or waited behind one that did): kept in the disk spool and replayed by the gateway.', () => t().rowsSpooled);
    counterFrom(registers, 'fleetgw_telemetry_samples_replayed_total', 'Samples inserted from the disk spool (after a store outage, or left by the previous run).', () => t().rowsReplayed);
    gaugeFrom(registers, 'fleetgw_telemetry_spool_bytes', 'Bytes of telemetry rows in the disk spool (blocks waiting for or in an insert, and the outage backlog).', () => t().spoolBytes);
    gaugeFrom(registers, 'fleetgw_telemetry_spool_backlog_blocks', 'Insert blocks waiting in the disk spool for the store to come back.', () => t().spoolBacklog);
    counterFrom(registers, 'fleetgw_telemetry_spool_full_waits_total', 'Times an insert block waited for room in a full disk spool (robots are then slowed by backpressure).', () => t().spoolFullWaits);
    counterFrom(registers, 'fleetgw_telemetry_batches_duplicate_total', 'Sequenced telemetry batches dropped because the gateway already held them (resends after a reconnect or a restart).', () => t().duplicateBatches);
    labelledCounterFrom(registers, 'fleetgw_telemetry_frames_dropped_total', 'Received batches not turned into rows, by reason: corrupt (undecodable), worker_crash (a decode thread died or a decoder threw: a bug), shutting_down (arrived during shutdown).', 'reason', {
      corrupt: () => t().corruptFrames,
      worker_crash: () => t().framesLost,
      shutting_down: () => t().framesRejected,
    });
    labelledCounterFrom(registers, 'fleetgw_telemetry_values_bounded_total', 'Robot-supplied telemetry strings cut to their bound at ingest, by reason: <column>_too_long (cut to its byte limit), <column>_too_many (list entries past its length limit dropped); docs/robot-link.md.', 'reason',
      Object.fromEntries(sources.boundReasons.map((name, i) => [name, () => t().boundedValues[i] ?? 0])));
    labelledCounterFrom(registers, 'fleetgw_telemetry_decode_batches_total', 'Telemetry batches handed to a decoder, by thread: pool (a decode worker) or main (a small batch at light load, decoded where it costs less than the thread hop).', 'thread', {
      pool: () => t().batches,
      main: () => t().batchesInline,
    });
    gaugeFrom(registers, 'fleetgw_telemetry_queue_bytes', 'Telemetry bytes held in the gateway: batching, decoding and waiting for or in an insert.', () => t().queueBytes);
    gaugeFrom(registers, 'fleetgw_telemetry_inserts_in_flight', 'Inserts sent to the telemetry store and not yet answered.', () => t().insertsInFlight);
    const storeUp = sources.storeUp;
    if (storeUp !== undefined) gaugeFrom(registers, 'fleetgw_telemetry_store_up', '1 while the telemetry store answers (and is set up), 0 while it is down or refuses: telemetry then waits in the disk spool.', () => (storeUp() ? 1 : 0));
    gaugeFrom(registers, 'fleetgw_telemetry_backpressure', '1 while robot telemetry reads are paused (queued bytes over the high-water mark).', () => (t().paused ? 1 : 0));
    this.pauses = new Counter({ name: 'fleetgw_telemetry_backpressure_pauses_total', help: 'Times robot telemetry reads were paused by backpressure.', registers });
    this.inserts = new Counter({ name: 'fleetgw_telemetry_inserts_total', help: 'Insert attempts to the telemetry store, by outcome (ok, error); a retried batch counts once per attempt.', labelNames: ['outcome'], registers, collect: () => this.fold() });
    this.insertSeconds = new Histogram({ name: 'fleetgw_telemetry_insert_duration_seconds', help: 'Duration of insert attempts to the telemetry store, by outcome.', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registers, collect: () => this.fold() });

    const stream = cachedRead(sources.stream);
    gaugeFrom(registers, 'fleetgw_stream_sockets', 'Open live telemetry WebSockets.', () => stream().sockets);
    counterFrom(registers, 'fleetgw_stream_samples_dropped_total', 'Live samples not sent to a slow WebSocket subscriber (it got a dropped notice instead).', () => stream().droppedSamples);

    this.lateness = new Histogram({ name: 'fleetgw_scheduler_lateness_seconds', help: 'Time from a schedule occurrence\'s due time to its commit, by outcome (fired, skipped).', labelNames: ['outcome'], buckets: LATENESS_BUCKETS, registers, collect: () => this.fold() });
    gaugeFrom(registers, 'fleetgw_schedules_armed', 'Schedules armed in the scheduler.', sources.schedulesArmed);

    // Every labelled series a rule or panel reads exists at 0 from the start for its known label
    // values: an increase() or rate() then sees the first event too, where a series born at 1 would
    // show no increase (docs/operations.md, "What to watch").
    for (const action of sources.commandActions ?? []) for (const state of COMMAND_STATES) this.commandStates.inc({ action, state }, 0);
    // The histograms through their slots (the fold writes prom-client's series under its own key).
    for (const outcome of ['received', 'rejected'] as const) this.histogram(this.ackSeconds, `a\0${outcome}`, () => ({ outcome }), ACK_BUCKETS).zero();
    for (const outcome of ['ok', 'error'] as const) {
      this.inserts.inc({ outcome }, 0);
      this.histogram(this.insertSeconds, `s\0${outcome}`, () => ({ outcome }), LATENCY_BUCKETS).zero();
    }
    for (const outcome of ['fired', 'skipped'] as const) this.histogram(this.lateness, `l\0${outcome}`, () => ({ outcome }), LATENESS_BUCKETS).zero();
    if (sources.certificateExpirySeconds !== undefined) {
      const expiry = sources.certificateExpirySeconds;
      gaugeFrom(registers, 'fleetgw_tls_certificate_expiry_timestamp_seconds', 'When the certificate served on HTTPS (and the robot link off loopback) expires, Unix seconds.', () => expiry);
    }

    const ready: Gauge<'check'> = new Gauge({
      name: 'fleetgw_ready',
      help: 'Readiness checks behind /readyz and the gRPC health service: 1 passing, 0 failing.',
      labelNames: ['check'],
      registers,
      collect: () => {
        for (const [check, ok] of Object.entries(sources.readiness())) ready.set({ check }, ok ? 1 : 0);
      },
    });
  }

  /** Content-Type of {@link render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Records a finished REST request (the router's completion hook). */
  httpRequest(r: HttpRequestDone): void {
    const method = METHODS.has(r.method) ? r.method : 'other';
    const route = r.route ?? 'unmatched';
    this.counter(this.httpRequests, `h\0${method}\0${route}\0${r.status}`, () => ({ method, route, status: String(r.status) })).inc();
    this.histogram(this.httpDuration, `d\0${method}\0${route}`, () => ({ method, route }), LATENCY_BUCKETS).observe(r.durationMs / 1000);
  }

  /** A command entered a delivery state. */
  commandState(action: string, state: string): void {
    this.counter(this.commandStates, `c\0${action}\0${state}`, () => ({ action, state })).inc();
  }

  /** The robot acknowledged a command `latencyMs` after its first send. */
  commandAcked(outcome: 'received' | 'rejected', latencyMs: number): void {
    this.histogram(this.ackSeconds, `a\0${outcome}`, () => ({ outcome }), ACK_BUCKETS).observe(latencyMs / 1000);
  }

  /** One insert attempt to the telemetry store ended. */
  insertDone(ok: boolean, durationMs: number): void {
    const outcome = ok ? 'ok' : 'error';
    this.counter(this.inserts, `i\0${outcome}`, () => ({ outcome })).inc();
    this.histogram(this.insertSeconds, `s\0${outcome}`, () => ({ outcome }), LATENCY_BUCKETS).observe(durationMs / 1000);
  }

  /** Telemetry backpressure turned on (true) or off. */
  backpressure(paused: boolean): void {
    if (paused) this.pauses.inc();
  }

  /** A write nobody awaited failed in the module `owner` (a bounded set of module names). */
  storeWriteFailed(owner: string): void {
    this.counter(this.storeWriteFailures, `w\0${owner}`, () => ({ owner })).inc();
  }

  /** A schedule occurrence committed `latenessMs` after it fell due. */
  schedulerLateness(outcome: 'fired' | 'skipped', latenessMs: number): void {
    this.histogram(this.lateness, `l\0${outcome}`, () => ({ outcome }), LATENESS_BUCKETS).observe(Math.max(0, latenessMs) / 1000);
  }

  private counter<L extends string>(c: Counter<L>, key: string, labels: () => Record<L, string>): CounterSlot {
    let slot = this.slots.get(key) as CounterSlot | undefined;
    if (slot === undefined) {
      slot = new CounterSlot(c, labels());
      this.slots.set(key, slot);
      this.counterSlots.push(slot);
    }
    return slot;
  }

  private histogram<L extends string>(h: Histogram<L>, key: string, labels: () => Record<L, string>, buckets: readonly number[]): HistogramSlot {
    let slot = this.slots.get(key) as HistogramSlot | undefined;
    if (slot === undefined) {
      slot = new HistogramSlot(h, labels(), buckets);
      this.slots.set(key, slot);
      this.histogramSlots.push(slot);
    }
    return slot;
  }

  /**
   * Moves what every slot gathered into prom-client. Each labelled metric's collect() calls it: the
   * first call of a scrape does the work, the others find nothing pending.
   */
  private fold(): void {
    for (const s of this.counterSlots) s.fold();
    for (const s of this.histogramSlots) s.fold();
  }
}

/** A counter's label set: increments gathered as a plain number, added to prom-client at a scrape. */
class CounterSlot {
  private pending = 0;

  constructor(
    private readonly counter: Counter<string>,
    private readonly labels: Record<string, string>,
  ) {}

  inc(): void {
    this.pending++;
  }

  fold(): void {
    if (this.pending === 0) return;
    this.counter.inc(this.labels, this.pending);
    this.pending = 0;
  }
}

/** prom-client's record of one histogram series (lib/histogram.js, `createBaseValues`). */
interface PromHistogramSeries {
  labels: Record<string, string>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/**
 * A histogram's label set: observations gathered as per-bucket counts, a sum and a count, added to
 * prom-client's series at a scrape. prom-client has no call that adds counts in bulk (observe() takes
 * one value), so the fold adds them to the series record its exposition reads; the metrics tests
 * compare the result with a histogram fed through observe().
 */
class HistogramSlot {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;
  private series: PromHistogramSeries | undefined;
  private readonly hash: string;
  /** Publish the series (at 0) before its first observation. */
  private published = false;

  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: Record<string, string>,
    private readonly buckets: readonly number[],
  ) {
    this.counts = buckets.map(() => 0);
    // Our own key in prom-client's map: nothing else observes these histograms by labels.
    this.hash = `fold\0${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join('\0')}`;
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.buckets;
    // Past the last bound the observation counts in +Inf only (the count), as in prom-client.
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.counts[i]!++;
        break;
      }
    }
  }

  /** Publishes the series at 0 from the next scrape on, before any observation. */
  zero(): void {
    this.published = true;
  }

  fold(): void {
    if (this.count === 0 && !this.published) return;
    // prom-client's private per-series map (15.1.3): package.json pins that exact version, since a
    // minor release may rename or reshape it; test/metrics checks the folded output.
    const map = (this.histogram as unknown as { hashMap: Record<string, PromHistogramSeries> }).hashMap;
    let s = map[this.hash];
    if (s === undefined || s !== this.series) {
      // First fold, or the histogram was reset: a fresh series, as prom-client creates on a first observe.
      const bucketValues: Record<number, number> = {};
      for (const b of this.buckets) bucketValues[b] = 0;
      s = { labels: this.labels, bucketValues, sum: 0, count: 0 };
      map[this.hash] = s;
      this.series = s;
    }
    if (this.count === 0) return;
    for (let i = 0; i < this.buckets.length; i++) {
      const n = this.counts[i]!;
      if (n > 0) {
        s.bucketValues[this.buckets[i]!]! += n;
        this.counts[i] = 0;
      }
    }
    s.sum += this.sum;
    s.count += this.count;
    this.sum = 0;
    this.count = 0;
  }
}

/** A counter whose value is a running total kept elsewhere, brought up to date at each scrape. */
function counterFrom(registers: Registry[], name: string, help: string, read: () => number): void {
  let seen = 0;
  const c: Counter = new Counter({
    name,
    help,
    registers,
    collect: () => {
      const v = read();
      if (v > seen) c.inc(v - seen);
      seen = Math.max(seen, v);
    },
  });
}

function gaugeFrom(registers: Registry[], name: string, help: string, read: () => number): void {
  const g: Gauge = new Gauge({ name, help, registers, collect: () => g.set(read()) });
}

/** counterFrom() with one label: each label value's running total is read at scrape time. */
function labelledCounterFrom<L extends string>(registers: Registry[], name: string, help: string, label: L, reads: Record<string, () => number>): void {
  const seen = new Map<string, number>();
  const c: Counter<L> = new Counter({
    name,
    help,
    labelNames: [label],
    registers,
    collect: () => {
      for (const [value, read] of Object.entries(reads)) {
        const v = read();
        const before = seen.get(value) ?? 0;
        // Every known label value is published, at 0 until its first event (an increase() sees it).
        if (v > before || !seen.has(value)) {
          const labels: Partial<Record<L, string>> = {};
          labels[label] = value;
          c.inc(labels, Math.max(0, v - before));
        }
        seen.set(value, Math.max(before, v));
      }
    },
  });
}

/** One stats() call per scrape for the several metrics that read it. */
function cachedRead<T>(read: () => T): () => T {
  let at = -1;
  let value: T | undefined;
  return () => {
    const now = Date.now();
    // A scrape collects every metric within the same few milliseconds.
    if (value === undefined || now - at > 100) {
      value = read();
      at = now;
    }
    return value;
  };
}
