/**
 * The seams between the parts of the VDA 5050 robot link: the broker plugin (embedded aedes or an
 * external broker, robot authentication and topic isolation) provides these to the link plugin
 * (master control: the MQTT client that maps VDA 5050 messages to and from the gateway's robot link).
 */

/** A robot's VDA 5050 identity: its topics are `{interface}/{version}/{manufacturer}/{serialNumber}/…`. */
export interface Vda5050Binding {
  readonly manufacturer: string;
  readonly serialNumber: string;
}

/** The robot of a VDA 5050 identity. */
export interface Vda5050Robot {
  readonly robotId: string;
  readonly fleetId: string;
  readonly binding: Vda5050Binding;
}

/** Lookups between robots and their VDA 5050 identities (owned by the robot registry's records). */
export interface Vda5050Identities {
  /** The robot bound to this identity, or undefined when none is. */
  robotOf(manufacturer: string, serialNumber: string): Vda5050Robot | undefined;
  /** The robot's identity, or undefined when it does not use VDA 5050. */
  bindingOf(robotId: string): Vda5050Binding | undefined;
  /** Every bound robot (the broker and the link subscribe from this at start). */
  all(): readonly Vda5050Robot[];
  /** Called with the robot id whenever a binding is added, changed or removed. Returns an unsubscribe. */
  onChange(listener: (robotId: string) => void): () => void;
}

/** How master control reaches the broker. */
export interface Vda5050BrokerConnection {
  /** `mqtt://host:port` or `mqtts://host:port`. */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The CA to trust for `mqtts://` (the gateway's own certificate for the embedded broker). */
  readonly ca?: Buffer;
  /** The topic prefix's interface name (`uagv` by default). */
  readonly interfaceName: string;
  /** The protocol version robots speak (`2.0.0`, `2.1.0`); topics use its major (`v2`). */
  readonly version: string;
}
