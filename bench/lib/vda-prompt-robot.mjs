// A VDA 5050 2.0 robot that reacts at once, for bench/vda5050-stop-latency.mjs (`--vda-robot prompt`):
// a plain MQTT client (npm `mqtt`, user name = robot id, password = robot token) subscribed to its
// instantActions topic. Every instantActions message is answered in the same turn with a `state` whose
// actionStates hold its actions as FINISHED (startPause / stopPause set `paused`), so the time between
// "delivered" and "published" is the robot's JSON work only, as the gRPC agent's ack on receipt is.
// It announces itself like vda-5050-lib does: `connection` ONLINE (retained, QoS 1) with a
// CONNECTIONBROKEN last will, then a first state. Not a full AGV: no orders, no driving, no factsheet.
import mqtt from 'mqtt';

/** Action states kept in each state (the newest last), as a robot keeps its recent actions. */
const KEEP_ACTIONS = 16;

/**
 * Connects the robot and resolves once its first state is out.
 * `onDelivered(actionIds, t)` is called when an instantActions message arrives and
 * `onPublished(actionIds, t)` just before the state showing them is handed to the socket.
 */
export async function startPromptRobot({ brokerUrl, robotId, robotToken, manufacturer, serialNumber, now, onDelivered, onPublished }) {
  const base = `uagv/v2/${manufacturer}/${serialNumber}`;
  const header = { version: '2.0.0', manufacturer, serialNumber };
  let stateHeader = 0;
  let paused = false;
  const actionStates = [];
  const will = { topic: `${base}/connection`, payload: JSON.stringify({ ...header, headerId: 0, timestamp: new Date().toISOString(), connectionState: 'CONNECTIONBROKEN' }), qos: 1, retain: true };
  const client = mqtt.connect(brokerUrl, { username: robotId, password: robotToken, protocolVersion: 4, clean: true, reconnectPeriod: 1000, will });
  client.on('error', () => {});
  await new Promise((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  // The gRPC link's sockets have Nagle off too; a robot's state is one small packet.
  client.stream.setNoDelay?.(true);

  const publishState = (ids) => {
    const msg = {
      ...header, headerId: ++stateHeader, timestamp: new Date().toISOString(),
      orderId: '', orderUpdateId: 0, lastNodeId: 'home', lastNodeSequenceId: 0, nodeStates: [], edgeStates: [], actionStates,
      driving: false, paused, operatingMode: 'AUTOMATIC', newBaseRequest: false, distanceSinceLastNode: 0,
      agvPosition: { x: 0, y: 0, theta: 0, mapId: 'site', positionInitialized: true },
      batteryState: { batteryCharge: 80, batteryVoltage: 48, charging: false },
      errors: [], information: [], safetyState: { eStop: 'NONE', fieldViolation: false }, loads: [],
    };
    const payload = JSON.stringify(msg);
    if (ids.length > 0) onPublished?.(ids, now());
    client.publish(`${base}/state`, payload, { qos: 0 });
  };

  client.on('message', (topic, payload) => {
    if (topic !== `${base}/instantActions`) return;
    const t = now();
    const msg = JSON.parse(payload.toString());
    const actions = msg.instantActions ?? msg.actions ?? [];
    const ids = actions.map((a) => a.actionId);
    onDelivered?.(ids, t);
    for (const a of actions) {
      if (a.actionType === 'startPause') paused = true;
      else if (a.actionType === 'stopPause') paused = false;
      actionStates.push({ actionId: a.actionId, actionType: a.actionType, actionStatus: 'FINISHED', resultDescription: '' });
    }
    if (actionStates.length > KEEP_ACTIONS) actionStates.splice(0, actionStates.length - KEEP_ACTIONS);
    publishState(ids);
  });
  await client.subscribeAsync(`${base}/instantActions`, { qos: 0 });
  await client.publishAsync(`${base}/connection`, JSON.stringify({ ...header, headerId: 1, timestamp: new Date().toISOString(), connectionState: 'ONLINE' }), { qos: 1, retain: true });
  publishState([]);
  return {
    stop: async () => {
      await client.publishAsync(`${base}/connection`, JSON.stringify({ ...header, headerId: 2, timestamp: new Date().toISOString(), connectionState: 'OFFLINE' }), { qos: 1, retain: true }).catch(() => undefined);
      await client.endAsync();
    },
  };
}
