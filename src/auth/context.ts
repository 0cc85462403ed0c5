/**
 * The authenticated caller, resolved from an API key: what every authorization check (access.ts)
 * and every audit entry reads.
 */
export interface AuthContext {
  actorType: 'api_key';
  apiKeyId: string;
  orgId: string;
  /** Fleet the key is bound to, or null for an org-wide key. */
  fleetId: string | null;
  permissions: readonly string[];
}
