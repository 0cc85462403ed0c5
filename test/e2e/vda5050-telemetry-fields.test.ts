/**
 * A virtual VDA 5050 AGV's map id and loads (vda-5050-lib's AgvController + VirtualAgvAdapter)
 * through the real `fleetgw serve`: its `state.agvPosition.mapId` and `state.loads` reach the REST
 * robot view (`motionTelemetry.mapId`, `statusTelemetry.loads`) and the rows of the telemetry store
 * (a real ClickHouse server's `map_id`, `load_*` columns), and a load set down empties them again.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';

const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');
const DATABASE = `vda_fields_${process.pid}`;

async function query(sql: string): Promise<string> {
  const res = await fetch(`${url}/?database=${DATABASE}`, { method: 'POST', body: sql });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${sql}: HTTP ${res.status} ${text}`);
  return text;
}

describe.skipIf(url === null)(`a virtual AGV's map id and loads through fleetgw serve${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const d = makeDataDir('fleetgw-vda-fields-');
  let gw: RunningGateway | undefined;
  let agv: VirtualAgv | undefined;

  afterAll(async () => {
    await agv?.stop();
    await gw?.stop();
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${DATABASE}` });
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('reach the robot view and the store', async () => {
    const robot = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme', 'AGV-7');
    const broker = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.args, '--clickhouse-url', `${url}/${DATABASE}`]);
    agv = await startVirtualAgv({
      brokerUrl: broker.url, username: robot.robotId, password: robot.robotToken, manufacturer: robot.manufacturer, serialNumber: robot.serialNumber,
      position: { x: 3, y: 4, mapId: 'hall-2' },
    });
    const view = async (): Promise<any> => (await api(gw!.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body;

    await until(async () => (await view()).motionTelemetry?.mapId === 'hall-2', 30_000, 'the map id in the robot view', 250);
    expect((await view()).statusTelemetry.loads).toEqual({ count: 0, ids: [], types: [], weightKg: 0 });

    // Two loads on board, as the AGV's own state reports them (what its pick action sets).
    agv.controller.updatePartialState({
      loads: [
        { loadId: 'RFID_0001', loadType: 'EPAL', weight: 412.5 },
        { loadType: 'box', weight: 20 },
      ],
    }, true);
    await until(async () => (await view()).statusTelemetry.loads.count === 2, 30_000, 'the loads in the robot view', 250);
    expect((await view()).statusTelemetry.loads).toEqual({ count: 2, ids: ['RFID_0001', ''], types: ['EPAL', 'box'], weightKg: 432.5 });

    // The store's rows carry them.
    const stored = async (): Promise<string> => query(`SELECT map_id, load_count, load_ids, load_types, load_weight_kg FROM telemetry_samples WHERE robot_id = '${robot.robotId}' AND load_count = 2 LIMIT 1 FORMAT TabSeparated`).catch(() => '');
    await until(async () => (await stored()) !== '', 60_000, 'a stored row with the loads', 250);
    expect(await stored()).toBe("hall-2\t2\t['RFID_0001','']\t['EPAL','box']\t432.5\n");

    // Set down: the next state has none.
    agv.controller.updatePartialState({ loads: [] }, true);
    await until(async () => (await view()).statusTelemetry.loads.count === 0, 30_000, 'the loads gone from the robot view', 250);
    expect((await view()).statusTelemetry.loads).toEqual({ count: 0, ids: [], types: [], weightKg: 0 });
  }, 180_000);
});
