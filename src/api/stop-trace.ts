/**
 * A benchmark's view into an ack-waiting command request: when `FLEETGW_BENCH_STOP_TRACE` names a
 * file, each such request's stages (handler start, commands sent, acks in, commits done, in ms on the
 * process's monotonic clock) are appended to it as one JSON line per command, so
 * bench/command-latency.mjs can tell where a slow stop's time went. Off (no file named) it costs one
 * branch per request.
 *
 * Lines are gathered and appended asynchronously (never a synchronous write on the event loop); at most
 * {@link TRACE_PENDING_MAX} lines wait, further lines are dropped while a write is slow.
 */
import { appendFile } from 'node:fs/promises';

/** The file named by FLEETGW_BENCH_STOP_TRACE (src/config.ts), set once at start by `fleetgw serve`; '' is off. */
let file = '';

/** Lines held while an append is in progress; past it, lines are dropped (a benchmark's aid, not a log). */
export const TRACE_PENDING_MAX = 10_000;

let pending: string[] = [];
let writing = false;

/** Whether stages are being recorded (a file is named). */
export let stopTraceOn = false;

/** Starts recording stages to `path` (appended to); undefined or '' leaves tracing off. */
export function setStopTraceFile(path: string | undefined): void {
  file = path ?? '';
  stopTraceOn = file !== '';
}

/** Records one command's stages (see the file comment); a no-op when tracing is off. */
export function traceStop(commandId: string, start: number, sent: number, acked: number, committed: number): void {
  if (!stopTraceOn) return;
  if (pending.length >= TRACE_PENDING_MAX) return;
  pending.push(JSON.stringify({ commandId, start, sent, acked, committed }));
  if (!writing) void drain();
}

async function drain(): Promise<void> {
  writing = true;
  while (pending.length > 0) {
    const lines = pending;
    pending = [];
    await appendFile(file, `${lines.join('\n')}\n`).catch(() => {});
  }
  writing = false;
}
