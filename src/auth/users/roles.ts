/**
 * Roles of people who log in, and the permissions each grants (docs/sessions.md). A role is a fixed
 * set of the spec's live permissions; API keys a user mints may carry at most these.
 */
import { LIVE_PERMISSIONS, type Permission } from '../permissions.js';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const READ: readonly Permission[] = ['fleet:read', 'robots:read', 'features:read', 'operations:read', 'missions:read', 'history:read'];
const OPERATE: readonly Permission[] = [...READ, 'fleet:write', 'robots:write', 'operations:control', 'missions:write'];

/** Each role's permissions, frozen (shared by every request of every session). */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = Object.freeze({
  viewer: Object.freeze([...READ]),
  operator: Object.freeze([...OPERATE]),
  admin: Object.freeze([...LIVE_PERMISSIONS]),
});

/** True for a role name. */
export function isRole(s: string): s is Role {
  return (ROLES as readonly string[]).includes(s);
}

/** Whether `role` may revoke API keys it did not create (only `admin`). */
export function canRevokeAnyKey(role: Role): boolean {
  return role === 'admin';
}
