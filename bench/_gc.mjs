import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { FLEETGW, spawnNode, stopChild } from './lib/procs.mjs';
import { leanHttp } from './lib/lean-http.mjs';
const dataDir = mkdtempSync('/tmp/gcx-');
const init = JSON.parse(execFileSync(process.execPath, [FLEETGW, 'admin', 'init', '--data-dir', dataDir, '--org', 'b', '--fleet', 'b', '--json']).toString());
const robot = JSON.parse(execFileSync(process.execPath, [FLEETGW, 'admin', 'add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'r1', '--json']).toString());
const gw = spawnNode(['--trace-gc-nvp', FLEETGW, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http'], { env: { FLEETGW_RATE_LIMIT_RPS: '1e8', FLEETGW_RATE_LIMIT_BURST: '1e8' } });
const ready = await gw.waitJson((o) => o.event === 'ready');
const c = await leanHttp(ready.http, init.apiKey);
const mark = (s) => gw.lines.push('MARK ' + s);
await new Promise((r) => setTimeout(r, 3000));
mark('idle-done');
for (let i = 0; i < 20000; i++) await c.request('/v1/me');
mark('get-done');
await new Promise((r) => setTimeout(r, 2000));
mark('idle2-done');
for (let i = 0; i < 5000; i++) {
  const r = await c.request('/v1/agent/control-robot', { org_id: init.orgId, fleet_id: init.fleetId, action: 'stop', robot_id: robot.robotId });
  if (i === 0) console.log(r.status, JSON.stringify(r.body).slice(0, 200));
}
mark('stops-done');
c.close();
await stopChild(gw, 'SIGTERM', 10000);
writeFileSync('/tmp/gc-lines.txt', gw.lines.join('\n'));
