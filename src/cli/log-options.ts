/**
 * `--log-format` and `--log-level`, shared by the long-running commands (serve, sim). Flags win over
 * FLEETGW_LOG_FORMAT / FLEETGW_LOG_LEVEL; without either the format is `pretty` on a terminal and
 * `json` otherwise, and the level is `info`.
 */
import type { Level } from 'pino';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type ProcessLoggerOptions } from '../gateway/logger.js';
import type { FleetgwConfig } from '../config.js';
import { opt } from './args.js';
import { UsageError } from './usage.js';

/** The parseStrict spec entries of the two options. */
export const LOG_OPTION_SPEC = { 'log-format': { type: 'string' }, 'log-level': { type: 'string' } } as const;

/** Reads the two options over their environment variables (parsed in src/config.ts); a bad flag is a usage error naming the allowed values. */
export function logOptions(values: Record<string, string | boolean | undefined>, env: Pick<FleetgwConfig, 'logFormat' | 'logLevel'>): ProcessLoggerOptions {
  const format = opt(values, 'log-format') ?? env.logFormat;
  const level = opt(values, 'log-level') ?? env.logLevel;
  if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--log-format must be one of: ${LOG_FORMATS.join(', ')}`);
  }
  if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(`--log-level must be one of: ${LOG_LEVELS.join(', ')}`);
  }
  return { ...(format !== undefined ? { format: format as LogFormat } : {}), ...(level !== undefined ? { level: level as Level } : {}) };
}
