/**
 * The logger the telemetry pipe writes to. The gateway passes its own; the default writes one JSON
 * line per event to stderr. Fields never carry secrets (no tickets, no keys: only counts and ids).
 */
export interface TelemetryLog {
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Start-up and recovery facts (schema migrated); optional so existing loggers keep working. */
  info?(msg: string, fields?: Record<string, unknown>): void;
}

/** JSON lines on stderr, `component: "telemetry"`. */
export const stderrLog: TelemetryLog = {
  info: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'info', component: 'telemetry', msg, ...fields })}\n`),
  warn: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'warn', component: 'telemetry', msg, ...fields })}\n`),
  error: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'error', component: 'telemetry', msg, ...fields })}\n`),
};
