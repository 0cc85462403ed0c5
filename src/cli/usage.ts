/** Thrown for bad command-line arguments: main prints one line and exits 2. */
export class UsageError extends Error {}

export const USAGE = `usage:
  fleetgw serve --data-dir DIR [--host H] [--port P] [--grpc-port G]
                [--clickhouse-url http(s)://HOST:PORT/DATABASE [--clickhouse-user U] [--clickhouse-password-file F]
                 [--clickhouse-cluster NAME --clickhouse-shard-urls URL,URL...]]
                [--tls-cert F --tls-key F] [--insecure-http] [--metrics-token-file F] [--telemetry-spool-mb N]
                [--restart-grace-s S] [--log-format json|pretty] [--log-level L]
                [--vda5050 auto|on|off] [--vda5050-mqtt-port P] [--vda5050-interface NAME] [--vda5050-version 2.0.0]
                [--vda5050-mqtt-url mqtt(s)://HOST:PORT [--vda5050-mqtt-username U] [--vda5050-mqtt-password-file F] [--vda5050-mqtt-ca F]]
                [--vda5050-map-origin LAT,LON[,ELEVATION_M]] [--vda5050-go-to-extent M]
              on SIGTERM/SIGINT the robots are told to hold S seconds for the restart (default 60, 0..300; 0: no notice)
              the ClickHouse password: --clickhouse-password-file F, else env FLEETGW_CLICKHOUSE_PASSWORD
              (never on the command line); the database is created when missing
              a cluster: one URL per shard in shard_num order, --clickhouse-url among them (docs/scale-out.md)
              GET /metrics needs Authorization: Bearer <the token in F> (default F: DIR/metrics-token, made on first start)
              VDA 5050 robots (docs/vda5050.md): auto (default) runs the embedded MQTT broker on --host, port P (default 1883),
              once a robot has a VDA 5050 identity; TLS with the gateway certificate on a non-loopback host;
              --vda5050-mqtt-url uses that broker instead; interface default uagv
              the robots' map (x east, y north, metres) has its origin at LAT,LON (default 52.0,5.0, elevation 2 m);
              go-to targets must lie within M metres of it along x and y (default 150)
  fleetgw admin init --data-dir DIR --org NAME --fleet NAME [--json]
              refused (exit 2) on a data dir that has an organization, unless --another-org
  fleetgw admin create-fleet --data-dir DIR --org ORG_ID --name NAME [--json]
  fleetgw admin create-key --data-dir DIR --org ORG_ID [--fleet FLEET_ID] --permissions p1,p2 [--expires-in SECONDS] [--json]
  fleetgw admin revoke-key --data-dir DIR --key-id ID
  fleetgw admin create-user --data-dir DIR --org ORG_ID --email EMAIL --role viewer|operator|admin [--json]
              the password: typed at the prompt (a terminal), else read from stdin; never an argument
  fleetgw admin revoke-sessions --data-dir DIR --email EMAIL [--json]
  fleetgw admin add-robot --data-dir DIR --fleet FLEET_ID --name NAME [--capabilities a,b] [--inactive] [--vda5050 MANUFACTURER/SERIAL] [--json]
              --vda5050: the robot speaks VDA 5050 over MQTT with this identity (docs/vda5050.md); one robot per identity
  fleetgw admin vda5050-acl --data-dir DIR --master-username NAME [--vda5050-interface NAME] [--vda5050-version 2.0.0] [--out FILE] [--json]
              the mosquitto acl_file isolating each VDA 5050 robot (username = robot id) to its own topics (docs/vda5050.md)
  fleetgw admin webhooks add --data-dir DIR --org ORG_ID (--url URL | --url-file F) [--format fleetgw|slack|alertmanager|pagerduty]
              [--pagerduty-routing-key-file F] [--name N] [--kinds k1,k2] [--max-attempts N] [--initial-backoff-ms MS] [--timeout-ms MS] [--json]
  fleetgw admin webhooks list --data-dir DIR --org ORG_ID [--json]
  fleetgw admin webhooks dead-letters --data-dir DIR --org ORG_ID [--limit N] [--json]
  fleetgw admin webhooks remove --data-dir DIR --org ORG_ID --webhook-id ID [--json]
              the signing secret is printed once by add; URLs are shown as their origin only
  fleetgw admin backup --data-dir DIR --out NEW_DIR [--compact] [--no-tls] [--json]     (consistent while serve runs)
              LMDB, DIR/metrics-token and DIR/tls (unless --no-tls): files mode 0600, a secret
  fleetgw admin restore --from BACKUP_DIR --data-dir EMPTY_DIR [--json]      (with the gateway stopped)
  fleetgw admin list-orgs --data-dir DIR [--json]
  fleetgw admin list-fleets --data-dir DIR [--org ORG_ID] [--json]
  fleetgw admin list-robots --data-dir DIR [--org ORG_ID] [--fleet FLEET_ID] [--json]
  fleetgw admin list-keys --data-dir DIR [--org ORG_ID] [--json]
              ids, names and state; never a key, a token or a digest of one
  fleetgw sim --grpc HOST:PORT (--robots-file FILE | --robot-id ID [--robot-token-file F]) [--hz N] [--tls-ca F] [--stop-on-link-loss-ms MS]
              [--max-restart-hold-ms MS] [--log-format json|pretty] [--log-level L]
              the token of --robot-id: --robot-token-file F, else env FLEETGW_ROBOT_TOKEN;
              --robot-token T still works but shows the token to every user of the host (ps): unsafe on shared hosts
  fleetgw sim --vda5050 --mqtt mqtt://HOST:PORT --robots-file FILE [--hz N] [--state-ms MS] [--interface NAME] [--tls-ca F]
              [--log-format json|pretty] [--log-level L]
              virtual VDA 5050 AGVs (vda-5050-lib); FILE: a JSON array of {robotId, robotToken, vda5050: "MANUFACTURER/SERIAL"},
              or the lines "fleetgw admin add-robot --vda5050 ... --json >> FILE" appends;
              each logs in with its robot id and token; --hz visualization messages per second (default 10),
              a state message at least every --state-ms (default 1000) and on every change
  fleetgw --version
  fleetgw COMMAND [SUBCOMMAND] --help      (the usage of that command)`;

/**
 * The lines of {@link USAGE} for `fleetgw <command>` (every block whose first line starts with it,
 * with its continuation lines), under the same `usage:` header; undefined when none matches.
 */
export function usageOf(command: string): string | undefined {
  const blocks: string[][] = [];
  let inBlock = false;
  for (const line of USAGE.split('\n').slice(1)) {
    if (line.startsWith('  fleetgw ')) {
      inBlock = line === `  fleetgw ${command}` || line.startsWith(`  fleetgw ${command} `);
      if (inBlock) blocks.push([line]);
    } else if (inBlock) {
      blocks.at(-1)?.push(line);
    }
  }
  return blocks.length === 0 ? undefined : ['usage:', ...blocks.flat()].join('\n');
}
