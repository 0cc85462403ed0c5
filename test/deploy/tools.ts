/**
 * The Debian tools test/deploy runs (.ci/run installs them). Without one, a test skips locally and
 * fails under CI=true, like the ClickHouse-server tests.
 */
import { existsSync } from 'node:fs';

/** The paths of `tools` that are not installed; throws under CI=true when any is missing. */
export function missingTools(tools: readonly string[], apt: string): string[] {
  const missing = tools.filter((t) => !existsSync(t));
  if (missing.length > 0 && process.env.CI === 'true') throw new Error(`CI=true and ${missing.join(', ')} missing: apt-get install ${apt}`);
  return missing;
}
