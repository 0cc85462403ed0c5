/** Policy rules shared by the command declarations (src/commands/catalog). */
import type { SettingRule } from './policy.js';

/** True when the point lies inside the ring (even-odd rule; lat/lon treated as plane coordinates). */
export function pointInRing(lat: number, lon: number, ring: readonly { lat: number; lon: number }[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i]!;
    const b = ring[j]!;
    if (a.lat > lat !== b.lat > lat && lon < ((b.lon - a.lon) * (lat - a.lat)) / (b.lat - a.lat) + a.lon) inside = !inside;
  }
  return inside;
}

/** Why a setting's value breaks its advertised rule, or null when it keeps it. */
export function settingProblem(key: string, value: unknown, rule: SettingRule | undefined): string | null {
  if (!rule) return `setting ${key} is not advertised`;
  switch (rule.kind) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `setting ${key} must be a number`;
      if (rule.min !== null && value < rule.min) return `setting ${key} must be at least ${rule.min}`;
      if (rule.max !== null && value > rule.max) return `setting ${key} must be at most ${rule.max}`;
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : `setting ${key} must be a boolean`;
    case 'string':
      if (typeof value !== 'string') return `setting ${key} must be a string`;
      return rule.allowed.length === 0 || rule.allowed.includes(value) ? null : `setting ${key} must be one of ${rule.allowed.join(', ')}`;
    case 'invalid':
      return `setting ${key} is advertised with an unknown kind`;
  }
}
