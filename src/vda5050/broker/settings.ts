/** How `fleetgw serve` runs the VDA 5050 side (docs/vda5050.md; flags parsed in src/cli/vda5050-options.ts). */

/** `auto`: the embedded broker listens once a robot has a VDA 5050 identity (at start or later). */
export const VDA5050_MODES = ['auto', 'on', 'off'] as const;
export type Vda5050Mode = (typeof VDA5050_MODES)[number];

/** Protocol versions the gateway speaks (topics use the major: `v2`). */
export const VDA5050_VERSIONS = ['2.0.0'] as const;

export const DEFAULT_VDA5050_INTERFACE = 'uagv';
export const DEFAULT_VDA5050_MQTT_PORT = 1883;

/** A broker the gateway does not run (mosquitto, EMQX, …): master control's login there. */
export interface ExternalBroker {
  /** `mqtt://host:port` or `mqtts://host:port`, without credentials. */
  url: string;
  username?: string;
  password?: string;
  /** CA bundle to trust for `mqtts://` (default: the system's). */
  ca?: Buffer;
}

export interface Vda5050Settings {
  mode: Vda5050Mode;
  /** The embedded broker's port (on the gateway's host). */
  port: number;
  interfaceName: string;
  version: (typeof VDA5050_VERSIONS)[number];
  /** Set: use this broker, run none. */
  external: ExternalBroker | null;
}

export const DEFAULT_VDA5050_SETTINGS: Vda5050Settings = Object.freeze({
  mode: 'auto',
  port: DEFAULT_VDA5050_MQTT_PORT,
  interfaceName: DEFAULT_VDA5050_INTERFACE,
  version: '2.0.0',
  external: null,
});
