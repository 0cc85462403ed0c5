/** A real pino logger whose lines land in an array, for tests that assert what a component logged. */
import { pino, type Logger } from 'pino';
import { loggerOptions } from '../../src/gateway/logger.js';

/**
 * Pushes one entry per log line into `lines`: the message, then the line's other fields as JSON (so a
 * test can match message text unescaped and still see every field, e.g. for a leaked secret).
 */
export function captureLog(lines: string[] = []): Logger {
  return pino(loggerOptions('debug'), {
    write(line: string): void {
      const { msg, ...rest } = JSON.parse(line) as { msg?: string };
      lines.push(`${msg ?? ''} ${JSON.stringify(rest)}`);
    },
  });
}

/** Parses a process's stderr (JSON log lines) into objects; non-JSON lines are kept as `{ raw }`. */
export function parseLogLines(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => {
    try {
      const v: unknown = JSON.parse(l);
      // A pretty line can be valid JSON too (a number inside a multi-line value): only objects are log lines.
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { raw: l };
    } catch {
      // Not a log line (a plain `fleetgw:` usage line): kept so assertions can still see it.
      return { raw: l };
    }
  });
}

/** The `msg` of every log line in a process's stderr, one per line. */
export function logMessages(text: string): string {
  return parseLogLines(text).map((l) => (typeof l.msg === 'string' ? l.msg : (typeof l.raw === 'string' ? l.raw : ''))).join('\n');
}
