/**
 * Strict argument parsing for every subcommand. Anything unexpected is a {@link UsageError} (exit 2),
 * because other tools drive the gateway through this interface and must fail loudly, not guess.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';

type Spec = Record<string, { type: 'string' | 'boolean' }>;

/** Parses `argv` against `spec`; returns string/boolean values by option name. */
export function parseStrict(argv: string[], spec: Spec): Record<string, string | boolean | undefined> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: true });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0] ?? ''}'`);
    return values;
  } catch (err: unknown) {
    if (err instanceof UsageError) throw err;
    // node's messages are multi-line in places; keep the one-line contract.
    const msg = err instanceof Error ? err.message.split('\n')[0] ?? 'invalid arguments' : 'invalid arguments';
    throw new UsageError(msg);
  }
}

/** A required string option. */
export function req(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** An optional string option. */
export function opt(values: Record<string, string | boolean | undefined>, name: string): string | undefined {
  const v = values[name];
  if (v === '') throw new UsageError(`--${name} needs a value`);
  return typeof v === 'string' ? v : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A required UUID option. */
export function reqUuid(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = req(values, name);
  if (!UUID.test(v)) throw new UsageError(`--${name} must be a UUID`);
  return v.toLowerCase();
}

/** Parses a port option: an integer 0..65535 (0 picks a free port). */
export function port(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--${name} must be a port number 0-65535`);
  return Number(value);
}

/** Parses a positive integer option. */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a positive integer`);
  }
  return Number(value);
}

/** Splits a comma list, dropping empty members. */
export function list(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
