/**
 * The mosquitto ACL file that gives robots on an external mosquitto the isolation of the embedded
 * broker (docs/vda5050.md, "mosquitto"): one `user` block per robot with a VDA 5050 identity (the
 * username is the robot id, as on the embedded broker), allowed to write only its own connection,
 * state, visualization and factsheet topics and to read only its own order and instantActions, and
 * master control allowed everything under `{interfaceName}/{majorVersion}/`. mosquitto denies what
 * no line allows. Identity parts are printable ASCII without `/`, `+`, `#` (checked when bound), so
 * every line is one exact topic.
 */
import type { Vda5050Robot } from '../contracts.js';
import { ROBOT_PUBLISHES, ROBOT_SUBSCRIBES, robotTopic, topicRoot } from './topics.js';

export interface MosquittoAclInput {
  interfaceName: string;
  version: string;
  masterUsername: string;
  robots: readonly Vda5050Robot[];
}

/** The ACL file's text. */
export function mosquittoAcl(input: MosquittoAclInput): string {
  const root = topicRoot(input.interfaceName, input.version);
  const lines = [
    `# fleetgw VDA 5050 ACL for mosquitto: ${input.robots.length} robot(s), topics ${root}/…`,
    '# Made by `fleetgw admin vda5050-acl`; make it again after binding a robot, then reload mosquitto (SIGHUP).',
    '',
    `user ${input.masterUsername}`,
    `topic readwrite ${root}/#`,
  ];
  for (const r of input.robots) {
    lines.push('', `# ${r.binding.manufacturer}/${r.binding.serialNumber} (fleet ${r.fleetId})`, `user ${r.robotId}`);
    for (const t of ROBOT_PUBLISHES) lines.push(`topic write ${robotTopic(root, r.binding, t)}`);
    for (const t of ROBOT_SUBSCRIBES) lines.push(`topic read ${robotTopic(root, r.binding, t)}`);
  }
  return `${lines.join('\n')}\n`;
}
