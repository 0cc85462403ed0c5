/**
 * A corpus of VDA 5050 2.0 inbound messages for the schema cross-check: hand-written valid messages
 * that use every optional part of each topic, and invalid ones made from them by mechanical
 * mutation (each field removed, replaced by a wrong type or null, each enum value misspelt, each
 * object nested one level deeper or put in an array, each number pushed far out of range), plus
 * malformed timestamps and non-object bodies.
 */
import type { InboundTopic } from '../../src/vda5050/inbound/index.js';

export interface CorpusEntry {
  topic: InboundTopic;
  /** What was done to the base message (`base`, `remove batteryState.reach`, ...). */
  name: string;
  message: unknown;
}

const header = (headerId: number) => ({ headerId, timestamp: '2026-05-01T12:00:00.123Z', version: '2.0.0', manufacturer: 'Acme', serialNumber: 'sn-1' });

export const VALID: Record<InboundTopic, Record<string, unknown>[]> = {
  connection: [
    { ...header(1), connectionState: 'ONLINE' },
    { ...header(2), connectionState: 'OFFLINE' },
    { ...header(0), connectionState: 'CONNECTIONBROKEN', timestamp: '2026-05-01T14:00:00+02:00' },
  ],
  state: [
    {
      ...header(10), orderId: '', orderUpdateId: 0, lastNodeId: '', lastNodeSequenceId: 0, driving: false,
      operatingMode: 'AUTOMATIC', nodeStates: [], edgeStates: [], actionStates: [], errors: [],
      batteryState: { batteryCharge: 80, charging: false }, safetyState: { eStop: 'NONE', fieldViolation: false },
    },
    {
      ...header(11), orderId: 'o-7', orderUpdateId: 3, zoneSetId: 'z1', lastNodeId: 'n1', lastNodeSequenceId: 2,
      driving: true, paused: false, newBaseRequest: true, distanceSinceLastNode: 0.4, operatingMode: 'SEMIAUTOMATIC',
      nodeStates: [
        { nodeId: 'n2', sequenceId: 4, nodeDescription: 'dock', released: true, nodePosition: { x: 1, y: 2, theta: -3.14, allowedDeviationXy: 0.1, allowedDeviationTheta: 0.2, mapId: 'm', mapDescription: 'hall' } },
        { nodeId: 'n3', sequenceId: 6, released: false, nodePosition: { x: 1, y: 3, mapId: 'm' } },
      ],
      edgeStates: [
        { edgeId: 'e1', sequenceId: 3, edgeDescription: 'aisle', released: true, trajectory: { degree: 1, knotVector: [0, 0, 1, 1], controlPoints: [{ x: 0, y: 0, weight: 1, orientation: 1.5 }, { x: 1, y: 2 }] } },
      ],
      agvPosition: { x: 0.5, y: 1, theta: 3.14159265359, mapId: 'm', mapDescription: 'hall', positionInitialized: true, localizationScore: 0.9, deviationRange: 0.05 },
      velocity: { vx: 0.5, vy: 0, omega: 0.1 },
      loads: [{}, { loadId: 'L1', loadType: 'EPAL', loadPosition: 'front', boundingBoxReference: { x: 0, y: 0, z: 0.2, theta: 0 }, loadDimensions: { length: 1.2, width: 0.8, height: 1 }, weight: 300 }],
      actionStates: ['WAITING', 'INITIALIZING', 'RUNNING', 'PAUSED', 'FINISHED', 'FAILED'].map((actionStatus, i) => ({ actionId: `a${i}`, actionType: 'pick', actionDescription: 'd', actionStatus, resultDescription: 'r' })),
      batteryState: { batteryCharge: 55.5, batteryVoltage: 24.1, batteryHealth: 97, charging: true, reach: 1200 },
      errors: [{ errorType: 'noRoute', errorReferences: [{ referenceKey: 'nodeId', referenceValue: 'n2' }], errorDescription: 'blocked', errorLevel: 'WARNING' }, { errorType: 'x', errorLevel: 'FATAL' }],
      information: [{ infoType: 'temp', infoReferences: [{ referenceKey: 'sensor', referenceValue: 's1' }], infoDescription: 'warm', infoLevel: 'INFO' }, { infoType: 'y', infoLevel: 'DEBUG' }],
      safetyState: { eStop: 'AUTOACK', fieldViolation: true },
      vendorExtension: { anything: [1, 'two'] },
    },
  ],
  visualization: [
    header(5),
    { ...header(6), agvPosition: { x: 1, y: 2, theta: 0, mapId: 'm', positionInitialized: false, localizationScore: 0, deviationRange: 1 }, velocity: { vx: 1, vy: 0, omega: 0 } },
    { ...header(7), velocity: {} },
  ],
  factsheet: [
    {
      ...header(1),
      typeSpecification: { seriesName: 'S', seriesDescription: 'd', agvKinematic: 'DIFF', agvClass: 'CARRIER', maxLoadMass: 500, localizationTypes: ['NATURAL', 'GRID'], navigationTypes: ['AUTONOMOUS'] },
      physicalParameters: { speedMin: 0.01, speedMax: 2, accelerationMax: 1, decelerationMax: 1.5, heightMin: 0.3, heightMax: 0.4, width: 0.8, length: 1.2 },
      protocolLimits: {
        maxStringLens: { msgLen: 10000, topicSerialLen: 64, topicElemLen: 64, idLen: 64, idNumericalOnly: false, enumLen: 32, loadIdLen: 64 },
        maxArrayLens: { 'order.nodes': 100, 'order.edges': 99, 'state.nodeStates': 100, 'information.infoReferences': 5 },
        timing: { minOrderInterval: 1, minStateInterval: 0.5, defaultStateInterval: 30, visualizationInterval: 1 },
      },
      protocolFeatures: {
        optionalParameters: [{ parameter: 'state.loads', support: 'SUPPORTED', description: 'd' }, { parameter: 'order.nodes.nodePosition', support: 'REQUIRED' }],
        agvActions: [{ actionType: 'pick', actionDescription: 'd', actionScopes: ['NODE', 'INSTANT'], actionParameters: [{ key: 'loadType', valueDataType: 'STRING', description: 'd', isOptional: true }], resultDescription: 'r' }, { actionType: 'x', actionScopes: [] }],
      },
      agvGeometry: {
        wheelDefinitions: [{ type: 'DRIVE', isActiveDriven: true, isActiveSteered: false, position: { x: 0, y: 0.3, theta: 0 }, diameter: 0.2, width: 0.05, centerDisplacement: 0, constraints: 'c' }],
        envelopes2d: [{ set: 'base', polygonPoints: [{ x: 0, y: 0 }, { x: 1, y: 0 }, { x: 1, y: 1 }], description: 'd' }],
        envelopes3d: [{ set: 'base', format: 'DXF', data: { any: 1 }, url: 'http://x/y', description: 1 }],
      },
      loadSpecification: {
        loadPositions: ['front'],
        loadSets: [{ setName: 'EPAL', loadType: 'EPAL', loadPositions: ['front'], boundingBoxReference: { x: 0, y: 0, z: 0, theta: 0 }, loadDimensions: { length: 1.2, width: 0.8 }, maxWeigth: 1000, minLoadhandlingHeight: 0, maxLoadhandlingHeight: 1, minLoadhandlingDepth: 0, maxLoadhandlingDepth: 1, minLoadhandlingTilt: 0, maxLoadhandlingTilt: 0.1, agvSpeedLimit: 1, agvAccelerationLimit: 1, agvDecelerationLimit: 1, pickTime: 5, dropTime: 5, description: 2 }],
      },
      localizationParameters: 3,
    },
    {
      ...header(2),
      typeSpecification: { seriesName: 'S', agvKinematic: 'OMNI', agvClass: 'FORKLIFT', maxLoadMass: 0, localizationTypes: [], navigationTypes: [] },
      physicalParameters: { speedMin: 0, speedMax: 1, accelerationMax: 1, decelerationMax: 1, heightMax: 2, width: 1, length: 2 },
      protocolLimits: { maxStringLens: {}, maxArrayLens: {}, timing: { minOrderInterval: 1, minStateInterval: 1 } },
      protocolFeatures: { optionalParameters: [], agvActions: [] },
      agvGeometry: {},
      loadSpecification: {},
    },
  ],
};

const ENUM_VALUES = new Set(['ONLINE', 'OFFLINE', 'CONNECTIONBROKEN', 'AUTOMATIC', 'SEMIAUTOMATIC', 'MANUAL', 'SERVICE', 'TEACHIN', 'WAITING', 'INITIALIZING', 'RUNNING', 'PAUSED', 'FINISHED', 'FAILED', 'WARNING', 'FATAL', 'INFO', 'DEBUG', 'AUTOACK', 'REMOTE', 'NONE', 'DIFF', 'OMNI', 'THREEWHEEL', 'FORKLIFT', 'CONVEYOR', 'TUGGER', 'CARRIER', 'NATURAL', 'REFLECTOR', 'RFID', 'DMC', 'SPOT', 'GRID', 'PHYSICAL_LINDE_GUIDED', 'VIRTUAL_LINE_GUIDED', 'AUTONOMOUS', 'SUPPORTED', 'REQUIRED', 'INSTANT', 'NODE', 'EDGE', 'BOOL', 'NUMBER', 'INTEGER', 'FLOAT', 'STRING', 'OBJECT', 'ARRAY', 'DRIVE', 'CASTER', 'FIXED', 'MECANUM']);

type Path = (string | number)[];

/** Every path in `v` (objects' keys and arrays' indexes), parents first. */
function paths(v: unknown, at: Path = []): Path[] {
  if (v === null || typeof v !== 'object') return [];
  const out: Path[] = [];
  for (const [k, child] of Object.entries(v)) {
    const p = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(p, ...paths(child, p));
  }
  return out;
}

function get(v: unknown, p: Path): unknown {
  let cur = v;
  for (const k of p) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

/** A copy of `v` with the value at `p` replaced by `f(old)`, or removed when `f` returns the `REMOVE` marker. */
const REMOVE = Symbol('remove');
function edit(v: unknown, p: Path, f: (old: unknown) => unknown): unknown {
  const copy = structuredClone(v);
  const parent = get(copy, p.slice(0, -1)) as Record<string | number, unknown> | unknown[];
  const key = p[p.length - 1]!;
  const next = f((parent as Record<string | number, unknown>)[key]);
  if (next === REMOVE) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete (parent)[key];
  } else {
    (parent as Record<string | number, unknown>)[key] = next;
  }
  return copy;
}

/** Mutations of one value; each yields [what, new value]. */
function* mutationsOf(old: unknown): Generator<[string, unknown]> {
  yield ['remove', REMOVE];
  yield ['null', null];
  if (typeof old === 'string') {
    yield ['number for string', 7];
    if (ENUM_VALUES.has(old)) {
      yield ['misspelt enum', `${old}X`];
      yield ['lower-case enum', old.toLowerCase()];
    }
  } else if (typeof old === 'number') {
    yield ['string for number', String(old)];
    yield ['fraction', old + 0.5];
    yield ['huge', 1e12];
    yield ['huge negative', -1e12];
    yield ['just above 1', 1.0001];
  } else if (typeof old === 'boolean') {
    yield ['number for boolean', 1];
    yield ['string for boolean', String(old)];
  } else if (Array.isArray(old)) {
    yield ['object for array', { ...old }];
    yield ['nested array', [old]];
    if (old.length > 0 && typeof old[0] !== 'object') yield ['array of arrays', old.map((x) => [x])];
  } else if (typeof old === 'object' && old !== null) {
    yield ['extra nesting', { inner: old }];
    yield ['array for object', [old]];
    yield ['string for object', 'x'];
  }
}

const TIMESTAMPS = ['2026-05-01T12:00:00', '2026-05-01 12:00:00Z', '2026-05-01t12:00:00z', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-05-01T24:00:00Z', '2026-05-01T12:00:00+01', '2026-05-01T12:00:00+0100', '2026-05-01', '12:00:00Z', '2016-12-31T23:59:60Z', '2026-05-01T12:00:00.123456789Z', ''];

/** The valid messages, every mutation of each, odd timestamps, and non-object bodies. */
export function corpus(extraValid: readonly CorpusEntry[] = []): CorpusEntry[] {
  const out: CorpusEntry[] = [...extraValid];
  for (const [topic, messages] of Object.entries(VALID) as [InboundTopic, Record<string, unknown>[]][]) {
    messages.forEach((base, i) => {
      out.push({ topic, name: `base ${i}`, message: base });
      for (const p of paths(base)) {
        for (const [what, value] of mutationsOf(get(base, p))) {
          out.push({ topic, name: `base ${i}: ${what} at ${p.join('.')}`, message: edit(base, p, () => value) });
        }
      }
      if (i === 0) {
        for (const ts of TIMESTAMPS) out.push({ topic, name: `timestamp '${ts}'`, message: { ...base, timestamp: ts } });
        for (const body of [null, [], [base], 'state', 42, true, {}]) out.push({ topic, name: `body ${JSON.stringify(body).slice(0, 20)}`, message: body });
      }
    });
  }
  return out;
}
