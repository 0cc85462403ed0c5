/**
 * The inbound schemas (written here in TypeBox) against a validator we did not write: vda-5050-lib's,
 * generated from the standard's schemas. Every message of the corpus (hand-written valid ones, their
 * mechanical mutations, and what the lib's own virtual AGV sent through a real broker) must be
 * accepted by both or refused by both, except the few documented differences below, each of which
 * must still show (so a fix on either side is noticed).
 */
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, test } from 'vitest';
import { createInboundGate, inboundValidators, type InboundTopic } from '../../src/vda5050/inbound/index.js';
import { corpus, VALID, type CorpusEntry } from './inbound-corpus.js';
import { captureLibAgvMessages, LIB_AGV, type CapturedMessage } from './lib-agv.js';

type LibValidate = (data: unknown) => boolean;
const lib = createRequire(import.meta.url)('vda-5050-lib/common/vda-5050-validators-2.0.js') as Record<string, LibValidate>;
const LIB: Record<InboundTopic, LibValidate> = {
  connection: lib.validateConnection!,
  state: lib.validateState!,
  visualization: lib.validateVisualization!,
  factsheet: lib.validateFactsheet!,
};

/** Where the two validators are known to differ, and why ours is right. */
const DIFFERENCES: { topic: InboundTopic; match: RegExp; oursAccepts: boolean; why: string }[] = [
  {
    topic: 'state',
    match: /^base 1: (fraction|just above 1) at batteryState\.reach$/,
    oursAccepts: false,
    why: 'batteryState.reach is an integer in the standard\'s schema (uint32 in its text); the lib\'s schema makes it any number',
  },
  {
    topic: 'factsheet',
    match: /^(base \d: remove at (typeSpecification|physicalParameters|protocolLimits|protocolFeatures|agvGeometry|loadSpecification)|lib virtual AGV factsheet .*)$/,
    oursAccepts: false,
    why: 'the standard\'s factsheet schema requires its six sections; the lib\'s makes them optional (its virtual AGV sends a factsheet with none)',
  },
  {
    topic: 'factsheet',
    match: /^base 0: (null|string for number|fraction|just above 1) at protocolLimits\.maxArrayLens\./,
    oursAccepts: false,
    why: 'the standard types each protocolLimits.maxArrayLens member an integer (in a block of the 2.0.0 file the lib\'s generator does not read)',
  },
  {
    topic: 'state',
    match: /^infinite number/,
    oursAccepts: false,
    why: 'a JSON number beyond a double (1e400) parses to Infinity: ajv refuses non-finite numbers, the lib takes any number',
  },
];

/** Numbers JSON.parse turns into Infinity, where any number is allowed. */
function infiniteNumbers(): CorpusEntry[] {
  const base = JSON.stringify(VALID.state[0]);
  return [
    { topic: 'state', name: 'infinite number in batteryState.batteryCharge', message: JSON.parse(base.replace('"batteryCharge":80', '"batteryCharge":1e400')) as unknown },
    { topic: 'state', name: 'infinite number in batteryState.batteryVoltage', message: JSON.parse(base.replace('"charging":false', '"charging":false,"batteryVoltage":-1e400')) as unknown },
  ];
}

function difference(e: CorpusEntry): (typeof DIFFERENCES)[number] | undefined {
  return DIFFERENCES.find((d) => d.topic === e.topic && d.match.test(e.name));
}

let libMessages: CapturedMessage[] = [];

beforeAll(async () => {
  libMessages = await captureLibAgvMessages();
}, 60_000);

function libEntries(): CorpusEntry[] {
  return libMessages.flatMap((m) => {
    const topic = m.topic.split('/').pop() as InboundTopic;
    if (!['connection', 'state', 'visualization', 'factsheet'].includes(topic)) return [];
    return [{ topic, name: `lib virtual AGV ${topic} ${m.payload.length} bytes`, message: JSON.parse(m.payload.toString('utf8')) as unknown }];
  });
}

describe('inbound schemas agree with vda-5050-lib\'s validators', () => {
  test('the virtual AGV sent every inbound topic', () => {
    const topics = new Set(libEntries().map((e) => e.topic));
    expect([...topics].sort()).toEqual(['connection', 'factsheet', 'state', 'visualization']);
  });

  test('every corpus message is accepted by both or refused by both', () => {
    const ours = inboundValidators();
    const entries = corpus([...libEntries(), ...infiniteNumbers()]);
    const disagreements: string[] = [];
    const seenDifferences = new Set<string>();
    let accepted = 0;
    for (const e of entries) {
      const a = ours[e.topic](e.message);
      const b = LIB[e.topic](structuredClone(e.message));
      if (a) accepted++;
      const known = difference(e);
      if (known !== undefined) {
        if (a === known.oursAccepts && b !== a) seenDifferences.add(known.why);
        else disagreements.push(`${e.topic} ${e.name}: expected the documented difference (${known.why}), got ours ${a}, lib ${b}`);
        continue;
      }
      if (a !== b) disagreements.push(`${e.topic} ${e.name}: ours ${a ? 'accepts' : 'refuses'}, lib ${b ? 'accepts' : 'refuses'}`);
    }
    expect(disagreements).toEqual([]);
    expect([...seenDifferences].sort()).toEqual(DIFFERENCES.map((d) => d.why).filter((w, i, all) => all.indexOf(w) === i).sort());
    // Both sides of the corpus are well represented.
    expect(accepted).toBeGreaterThan(100);
    expect(entries.length - accepted).toBeGreaterThan(500);
  });
});

describe('the gate takes what the virtual AGV sends', () => {
  test('its connection, state and visualization messages pass the whole gate', () => {
    const gate = createInboundGate({ version: '2.0.0', log: { warn: () => {} } });
    const robot = { robotId: 'r-lib', fleetId: 'f', binding: LIB_AGV };
    const refused: string[] = [];
    for (const m of libMessages) {
      const topic = m.topic.split('/').pop()!;
      if (topic !== 'connection' && topic !== 'state' && topic !== 'visualization') continue;
      if (gate.accept(robot, topic, m.payload) === undefined) refused.push(`${topic} ${m.payload.toString('utf8').slice(0, 120)}`);
    }
    expect(refused).toEqual([]);
    expect(gate.stats().accepted).toBeGreaterThan(10);
  });
});
