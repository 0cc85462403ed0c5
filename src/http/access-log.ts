/**
 * The access log: one line per HTTP request, written by a {@link RequestObserver} on the adapter's
 * completion hook. It names the route template, never the raw path (ids, and whatever a caller pasted
 * into it) nor the query string (stream tickets travel there), and the key's id, never a credential.
 */
import type { Logger } from 'pino';
import type { RequestDoneInfo, RequestObserver } from './request-done.js';

/**
 * A sink for whole JSON log lines (newline included) that go to the process log's destination as if
 * pino had written them: the process logger's `writeLine` (src/gateway/logger.ts).
 */
export type LogLineSink = (line: string) => void;

/**
 * An observer that writes each finished request as one `info` line on `log`.
 *
 * With `lines` (the process logger's raw sink), the line is formatted here rather than by pino: the
 * access line is the one log line written per request, and pino's generic path (bindings, per-value
 * serialisation, one destination write per line) cost about 5 µs of the ~20 µs a whole authenticated
 * read costs (bench/README.md, "Issue 9: the access line"). The fields and their order are pino's
 * (`level`, `time`, `pid`, then the `component` binding, the request fields, `msg`), so a reader of the
 * log cannot tell the difference; test/e2e/logging.test.ts reads them through `fleetgw serve`.
 * Every value is either a number, a fixed word, or a string from a closed alphabet (route templates,
 * UUID key ids, request ids of `[A-Za-z0-9-_.:@/+=]`, hex trace ids); the method, the one string a
 * client chooses freely among HTTP tokens, goes through JSON.stringify.
 */
export function accessLog(log: Logger, lines?: LogLineSink): RequestObserver {
  if (lines === undefined) return pinoAccessLog(log);
  const prefix = `,"pid":${process.pid},"component":"http","method":`;
  return (info: RequestDoneInfo): void => {
    if (!log.isLevelEnabled('info')) return;
    const method = JSON.stringify(info.method);
    const route = info.route === null ? 'null' : JSON.stringify(info.route);
    const keyId = info.keyId === null ? 'null' : `"${info.keyId}"`;
    let line = `{"level":"info","time":"${isoNow()}"${prefix}${method},"route":${route},"status":${info.status},"durationMs":${Math.round(info.durationMs * 10) / 10},"keyId":${keyId},"requestId":"${info.requestId}"`;
    if (info.traceId !== null) line += `,"traceId":"${info.traceId}"`;
    if (info.aborted) line += ',"aborted":true';
    line += `,"msg":${JSON.stringify(`${info.method} ${info.route ?? '(no route)'} ${info.status}`)}}\n`;
    lines(line);
  };
}

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

// Requests within one millisecond share a timestamp: formatting a Date costs more than the rest of the line.
let isoMs = -1;
let isoText = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}
