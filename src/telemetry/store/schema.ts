/**
 * Loads the `telemetry_samples` DDL from the top-level telemetry/schema/*.sql files (written from the
 * field table by `npm run gen`, samples-ddl.ts; telemetry/README.md explains why the SQL lives there)
 * and picks the variant for a server version.
 */
import { readFile } from 'node:fs/promises';

export type SchemaFlavor = 'modern' | 'legacy';

/** Oldest major with everything the modern DDL uses (DateTime64, fromUnixTimestamp64Milli, CODECs, TTL). */
export const MODERN_MIN_MAJOR = 21;

/** Works from src/telemetry (vitest) and dist/telemetry (built): both sit two levels under the root. */
const SCHEMA_DIR = new URL('../../../telemetry/schema/', import.meta.url);

/** `version()` text such as "18.16.1" or "24.8.4.13" -> flavor. */
export function flavorForVersion(version: string): SchemaFlavor {
  const major = Number.parseInt(version.split('.')[0] ?? '', 10);
  return Number.isFinite(major) && major >= MODERN_MIN_MAJOR ? 'modern' : 'legacy';
}

/** The CREATE TABLE statement for a flavor, comments stripped, placeholders filled. */
export async function loadSamplesDdl(flavor: SchemaFlavor, retentionDays: number): Promise<string> {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error('retentionDays must be a positive integer');
  const text = await readFile(new URL(`samples.${flavor}.sql`, SCHEMA_DIR), 'utf8');
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replaceAll('{retention_days}', String(retentionDays))
    .trim();
}
