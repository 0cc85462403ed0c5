/**
 * The one process logger: pino, one JSON line per event on stderr (`level`, `time`, `component`,
 * `msg`, and the event's fields), or the same events made readable by pino-pretty when asked
 * (`--log-format pretty`) or when stderr is a terminal. Every component gets a child logger with its
 * `component` bound (see {@link componentLogger}); HTTP request lines carry `requestId` (and
 * `traceId` when the caller sent a W3C `traceparent`).
 *
 * Never blocking the event loop: lines go to a sonic-boom stream in asynchronous mode, written in blocks
 * (at most {@link LOG_FLUSH_MS} late). It buffers up
 * to {@link LOG_BUFFER_BYTES} while the terminal or pipe is slow; past that bound, lines are dropped
 * (counted, and the count is reported in the next line that fits) rather than growing memory or
 * stalling a request. Pretty output is formatted on the main thread (pino-pretty's synchronous
 * formatter, so a line is never held in a transform stream at exit): it is meant for a developer's
 * terminal, JSON for production.
 *
 * Exit paths flush: {@link ProcessLogger.flush} writes the buffer synchronously; the CLI calls it before
 * it exits, and a `process.on('exit')` hook covers every other way out.
 */
import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { LOG_FORMATS as FORMATS, LOG_LEVELS as LEVELS } from '../config.js';
import type { LogBytesSink } from '../http/access-log.js';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

export const LOG_FORMATS: readonly LogFormat[] = FORMATS;
export const LOG_LEVELS: readonly Level[] = LEVELS;

/** Largest backlog of log bytes held in memory while stderr is slow (4 MiB); past it lines are dropped. */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/** Log bytes gathered before a write to stderr (below sonic-boom's 16 KiB write size). */
export const LOG_WRITE_BYTES = 8 * 1024;

/** Longest a log line waits for {@link LOG_WRITE_BYTES} to gather before it is written anyway. */
export const LOG_FLUSH_MS = 100;

export interface ProcessLoggerOptions {
  /** Default `info`. */
  level?: Level;
  /** Default: `pretty` when the destination is a terminal, else `json`. */
  format?: LogFormat;
  /** Default fd 2 (stderr). */
  fd?: number;
}

/** The process logger and what exit paths need. */
export interface ProcessLogger {
  readonly logger: Logger;
  readonly format: LogFormat;
  /** Writes every buffered line now, synchronously (exit paths). Never throws. */
  readonly flush: () => void;
  /**
   * The byte sink for lines formatted outside pino (the access log, src/http/access-log.ts): whole JSON
   * lines already encoded as UTF-8, each ending in a newline.
   */
  readonly bytes: LogBytesSink;
}

/** pino settings shared by the process logger and loggers built for tests. */
export function loggerOptions(level: Level = 'info'): LoggerOptions {
  return {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Labels, not pino's numbers: an operator reads `"level":"warn"` without a table.
    formatters: { level: (label) => ({ level: label }) },
    // No `redact`: pino's path redaction costs several times the line itself (bench/notes/http.md) and
    // would run on every access line. Secrets are kept out at the source instead: code logs key ids
    // and counts, never a credential, a query string or a body (test/e2e/logging.test.ts checks it).
  };
}

/** Builds the process logger on stderr. */
export function createProcessLogger(opts: ProcessLoggerOptions = {}): ProcessLogger {
  const fd = opts.fd ?? 2;
  const format = opts.format ?? (isTty(fd) ? 'pretty' : 'json');
  // Written in blocks of at least LOG_WRITE_BYTES, and every LOG_FLUSH_MS when fewer are waiting: each
  // write is a trip through libuv's thread pool (a thread woken, a syscall), which at one write per
  // access line cost more CPU than the line itself (bench/notes/http.md, "The access line's cost").
  // Bytes, not strings: in its string mode sonic-boom encodes each block to UTF-8 twice (for the write,
  // then again to find how much was written), which cost as much as formatting the access lines.
  const boom = pino.destination({
    dest: fd, sync: false, maxLength: LOG_BUFFER_BYTES, minLength: LOG_WRITE_BYTES, periodicFlush: LOG_FLUSH_MS, contentMode: 'buffer',
  });
  // sonic-boom's types know only its string mode; in buffer mode write() takes a Buffer.
  const writeBytes = boom.write.bind(boom) as unknown as (bytes: Buffer) => boolean;
  let dropped = 0;
  // A dropped write is one pino line or a chunk of access lines: count the lines it held.
  boom.on('drop', (data: Buffer | string) => {
    dropped += countLines(data);
  });
  // sonic-boom reports write errors (EPIPE when the reader went away) as events; with no listener they
  // would crash the process. A log that cannot be written is not worth the gateway.
  boom.on('error', () => {});
  const note = (line: string): string => {
    if (dropped === 0) return line;
    const n = dropped;
    dropped = 0;
    return `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), component: 'log', msg: `log buffer full: dropped ${n} lines`, dropped: n })}\n${line}`;
  };
  let dest: DestinationStream;
  let pretty: ((line: string) => string) | null = null;
  if (format === 'pretty') {
    pretty = prettyFactory({
      colorize: isTty(fd),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,component',
      messageKey: 'msg',
      messageFormat: '{if component}[{component}] {end}{msg}',
    });
    const format1 = pretty;
    dest = { write: (line: string) => void writeBytes(Buffer.from(note(format1(line)))) };
  } else {
    dest = { write: (line: string) => void writeBytes(Buffer.from(note(line))) };
  }
  const logger = pino(loggerOptions(opts.level ?? 'info'), dest);
  const writeChunk = (chunk: Uint8Array): void => {
    if (chunk.length === 0) return;
    if (pretty !== null) {
      for (const line of Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString('utf8').split('\n')) if (line.length > 0) dest.write(`${line}\n`);
      return;
    }
    if (dropped > 0) void writeBytes(Buffer.from(note('')));
    // A copy (one per chunk of lines, not per line): sonic-boom keeps the buffers it is given until written.
    void writeBytes(Buffer.from(chunk));
  };
  const flushHooks: (() => void)[] = [];
  const flush = (): void => {
    for (const hook of flushHooks) {
      try {
        hook();
      } catch {
        // A writer that cannot hand over its lines must not keep the rest of the log from being written.
      }
    }
    try {
      boom.flushSync();
    } catch {
      // Nothing else can be told: the log itself is what failed (stderr closed, or not open yet).
    }
  };
  process.on('exit', flush);
  return { logger, format, flush, bytes: { write: writeChunk, beforeFlush: (f) => {
    flushHooks.push(f);
    return () => {
      const at = flushHooks.indexOf(f);
      if (at >= 0) flushHooks.splice(at, 1);
    };
  } } };
}

/** A child logger with `component` bound: every line of one part of the gateway says which part. */
export function componentLogger(parent: Logger, component: string): Logger {
  return parent.child({ component });
}

/** A logger that writes nothing (the default where a caller passes none). */
export function silentLogger(): Logger {
  return pino({ enabled: false });
}

function countLines(data: Buffer | string): number {
  let n = 0;
  if (typeof data === 'string') {
    for (let i = data.indexOf('\n'); i >= 0; i = data.indexOf('\n', i + 1)) n++;
  } else {
    for (let i = data.indexOf(0x0a); i >= 0; i = data.indexOf(0x0a, i + 1)) n++;
  }
  return Math.max(1, n);
}

function isTty(fd: number): boolean {
  return fd === 2 ? process.stderr.isTTY === true : fd === 1 ? process.stdout.isTTY === true : false;
}
