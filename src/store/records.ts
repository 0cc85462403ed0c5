/**
 * Records kept in LMDB (the control plane). Plain objects encoded by lmdb-js (msgpack), so every
 * field here must be msgpack-safe. Secrets never appear: only SHA-256 digests of them.
 */

export interface OrgRecord {
  orgId: string;
  name: string;
  createdAtMs: number;
}

export interface FleetRecord {
  fleetId: string;
  orgId: string;
  name: string;
  createdAtMs: number;
}

export interface RobotRecord {
  robotId: string;
  fleetId: string;
  orgId: string;
  name: string;
  /** Capabilities set by the operator at registration; the agent's hello may add advertised ones. */
  capabilities: string[];
  /** Inactive robots are registered but not yet members of the fleet's working set. */
  active: boolean;
  /** SHA-256 of the robot token. */
  tokenHash: Uint8Array;
  createdAtMs: number;
  /** Operator labels (`PATCH /v1/robots/{id}`); absent on records written before they existed. */
  labels?: Record<string, string>;
  /** Operator notes; absent or null when none. */
  notes?: string | null;
  /** Last metadata change or transfer (Unix ms); absent when never changed. */
  updatedAtMs?: number;
  /** The robot's VDA 5050 identity when it speaks VDA 5050 over MQTT (docs/vda5050.md); absent otherwise. */
  vda5050?: { manufacturer: string; serialNumber: string };
}

export interface ApiKeyRecord {
  apiKeyId: string;
  orgId: string;
  /** null: the key may use every fleet of its organization that its permissions allow. */
  fleetId: string | null;
  permissions: string[];
  /** SHA-256 of the key's secret part. */
  secretHash: Uint8Array;
  createdAtMs: number;
  expiresAtMs: number | null;
  revokedAtMs: number | null;
  /** What the key is for; absent on keys made by `fleetgw admin`. */
  name?: string | null;
  /** The user who minted it through `POST /v1/orgs/{org_id}/api-keys`; absent: `fleetgw admin`. */
  createdBy?: { userId: string; email: string } | null;
}
