/** Permissions from the spec's Authentication section. */

export const LIVE_PERMISSIONS = [
  'fleet:read',
  'fleet:write',
  'robots:read',
  'robots:write',
  'features:read',
  'features:write',
  'operations:read',
  'operations:control',
  'missions:read',
  'missions:write',
  'history:read',
] as const;

/** Still accepted on a key (old keys carry them) but authorize no endpoint. */
export const RETIRED_PERMISSIONS = [
  'operations:draft',
  'operations:validate',
  'operations:deploy',
  'operations:deploy_without_human_approval',
  'audit:read',
  'exports:create',
  'exports:read',
] as const;

export type Permission = (typeof LIVE_PERMISSIONS)[number];

const LIVE = new Set<string>(LIVE_PERMISSIONS);
const KNOWN = new Set<string>([...LIVE_PERMISSIONS, ...RETIRED_PERMISSIONS]);

/** True for a permission that authorizes something today. */
export function isLivePermission(p: string): p is Permission {
  return LIVE.has(p);
}

/** True for any permission a key may carry (live or retired). */
export function isKnownPermission(p: string): boolean {
  return KNOWN.has(p);
}
