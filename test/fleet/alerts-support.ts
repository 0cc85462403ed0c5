/** A throw-away store with an org, a fleet and robots, and helpers for the alert unit tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventLog } from '../../src/events/log.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { ByteWriter } from '../../src/telemetry/sample/byte-writer.js';
import { writeRowFromValues } from '../../src/telemetry/sample/row-rowbinary.js';
import type { RowValues } from '../../src/telemetry/sample/row-values.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';
import { snapshotValue } from '../../src/telemetry/sample/snapshot-codec.js';

export interface AlertWorld {
  dir: string;
  store: Store;
  events: EventLog;
  orgId: string;
  fleetId: string;
  robotIds: string[];
  close(): Promise<void>;
}

export function alertWorld(robots = 2): AlertWorld {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-alerts-'));
  const store = openStore(dir);
  const org = createOrg(store, 'Acme');
  const fleet = createFleet(store, org.orgId, 'Yard');
  const robotIds: string[] = [];
  for (let i = 0; i < robots; i++) robotIds.push(addRobot(store, { fleetId: fleet.fleetId, name: `r${i}`, capabilities: [], active: true }).record.robotId);
  return {
    dir, store, events: new EventLog(store), orgId: org.orgId, fleetId: fleet.fleetId, robotIds,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A stored snapshot (format byte + RowBinary row) of a robot with the given e-stop, battery, clocks and position. */
export function snapshotBytes(
  robotId: string, fleetId: string,
  v: { estop?: boolean; batteryPct?: number; tsMs?: number; receivedAtMs?: number; lat?: number; lon?: number; faults?: string[] },
): Uint8Array {
  const values: RowValues = {};
  for (const f of SAMPLE_FIELDS) {
    values[f.column] = f.rowType === 'String' ? '' : f.rowType === 'Int64' ? 0 : f.rowType === 'UInt8' ? false : f.rowType === 'Array(String)' ? [] : 0;
  }
  values.robot_id = robotId;
  values.fleet_id = fleetId;
  values.ts_ms = v.tsMs ?? Date.now();
  values.estop = v.estop ?? false;
  values.battery_pct = v.batteryPct ?? 80;
  values.received_at_ms = v.receivedAtMs ?? values.ts_ms;
  values.lat = v.lat ?? 0;
  values.lon = v.lon ?? 0;
  values.faults = v.faults ?? [];
  const w = new ByteWriter(1024);
  writeRowFromValues(w, values);
  return snapshotValue(w.copyOut());
}
