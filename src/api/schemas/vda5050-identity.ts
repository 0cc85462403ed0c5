/** A robot's VDA 5050 identity (docs/vda5050.md), in the robot view and `PATCH /v1/robots/{robot_id}`. */
import { Type, type Static } from '@sinclair/typebox';
import { VDA5050_PART_MAX, VDA5050_PART_PATTERN } from '../../fleet/robots/vda5050-identity.js';
import { named } from './named.js';

const part = (what: string): ReturnType<typeof Type.String> =>
  Type.String({
    minLength: 1,
    maxLength: VDA5050_PART_MAX,
    pattern: VDA5050_PART_PATTERN,
    description: `${what}: one MQTT topic level, so printable ASCII without '/', '+' or '#', 1-${VDA5050_PART_MAX} characters.`,
  });

export const Vda5050Identity = named('Vda5050Identity', Type.Object(
  {
    manufacturer: part('The manufacturer level of the robot\'s topics'),
    serialNumber: part('The serial number level of the robot\'s topics'),
  },
  {
    additionalProperties: false,
    description:
      'The robot speaks VDA 5050 over MQTT on `{interfaceName}/{majorVersion}/{manufacturer}/{serialNumber}/{topic}`. ' +
      'One identity binds one robot (409 when another holds it). docs/vda5050.md.',
  },
));
export type Vda5050Identity = Static<typeof Vda5050Identity>;
