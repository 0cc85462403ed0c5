import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import {
  CommandAck_Status,
  GatewayMessageSchema,
  RobotMessageSchema,
} from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import {
  deserializeGatewayMessage,
  deserializeRobotMessage,
  encodeTelemetryEnvelope,
  serializeGatewayMessage,
  serializeRobotInbound,
} from '../../src/protocol/envelope.js';

function samples(n: number, from = 0): TelemetrySample[] {
  const batch = create(TelemetryBatchSchema, {
    samples: Array.from({ length: n }, (_, i) => ({
      tsMs: BigInt(1_700_000_000_000 + from + i),
      position: { latitude: 52 + i * 1e-6, longitude: 5, elevationM: 2 },
      mode: 'autonomous',
      gpsFix: 4,
    })),
  });
  return batch.samples;
}

function telemetryEnvelope(n: number): { bytes: Uint8Array; batch: Uint8Array } {
  const msg = create(RobotMessageSchema, { body: { case: 'telemetry', value: { samples: samples(n) } } });
  return { bytes: toBinary(RobotMessageSchema, msg), batch: toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: samples(n) })) };
}

describe('RobotMessage envelope deserializer', () => {
  it('returns a telemetry batch as raw bytes, identical to its protobuf-es encoding, without copying', () => {
    for (const n of [0, 1, 3, 200, 2000]) {
      const { bytes, batch } = telemetryEnvelope(n);
      const got = deserializeRobotMessage(bytes);
      expect(got.kind).toBe('telemetry');
      if (got.kind !== 'telemetry') continue;
      expect(Buffer.from(got.batch).equals(Buffer.from(batch))).toBe(true);
      expect(got.batch.buffer).toBe(bytes.buffer);
      expect(fromBinary(TelemetryBatchSchema, got.batch).samples).toHaveLength(n);
    }
  });

  it('handles one-, two- and three-byte length prefixes', () => {
    // 200 samples is > 127 bytes, 2000 samples > 16383 bytes.
    const sizes = [1, 200, 2000].map((n) => telemetryEnvelope(n).batch.length);
    expect(sizes[0]).toBeLessThan(128);
    expect(sizes[1]).toBeGreaterThan(127);
    expect(sizes[2]).toBeGreaterThan(16383);
  });

  it('decodes hello and ack envelopes with protobuf-es', () => {
    const hello = create(RobotMessageSchema, {
      body: { case: 'hello', value: { agentVersion: 'a/1', capabilities: ['stop', 'mode'], lastAppliedSeq: 42n } },
    });
    const got = deserializeRobotMessage(toBinary(RobotMessageSchema, hello));
    expect(got).toEqual({ kind: 'message', message: hello });
    const ack = create(RobotMessageSchema, {
      body: { case: 'ack', value: { commandId: 'c1', status: CommandAck_Status.REJECTED, reason: 'nope' } },
    });
    expect(deserializeRobotMessage(toBinary(RobotMessageSchema, ack))).toEqual({ kind: 'message', message: ack });
  });

  it('keeps protobuf merge semantics: repeated telemetry fields concatenate, a later oneof member wins', () => {
    const a = telemetryEnvelope(2).bytes;
    const b = create(RobotMessageSchema, { body: { case: 'telemetry', value: { samples: samples(3, 100) } } });
    const both = Buffer.concat([a, toBinary(RobotMessageSchema, b)]);
    const got = deserializeRobotMessage(both);
    const reference = fromBinary(RobotMessageSchema, both);
    expect(got.kind).toBe('telemetry');
    if (got.kind === 'telemetry' && reference.body.case === 'telemetry') {
      expect(fromBinary(TelemetryBatchSchema, got.batch)).toEqual(reference.body.value);
      expect(reference.body.value.samples).toHaveLength(5);
    }
    const ack = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'ack', value: { commandId: 'x' } } }));
    const ackLast = deserializeRobotMessage(Buffer.concat([a, ack]));
    expect(ackLast.kind).toBe('message');
    if (ackLast.kind === 'message') expect(ackLast.message.body.case).toBe('ack');
    const telemetryLast = deserializeRobotMessage(Buffer.concat([ack, a]));
    expect(telemetryLast.kind).toBe('telemetry');
  });

  it('lets a later command_result or mission_status win over telemetry, like protobuf-es', () => {
    const a = telemetryEnvelope(2).bytes;
    const result = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'commandResult', value: { commandId: 'c1', success: true } } }));
    const status = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'missionStatus', value: { runId: 'r1', state: 'running' } } }));
    for (const [bytes, kind] of [[result, 'commandResult'], [status, 'missionStatus']] as const) {
      const got = deserializeRobotMessage(Buffer.concat([a, bytes]));
      expect(fromBinary(RobotMessageSchema, Buffer.concat([a, bytes])).body.case).toBe(kind);
      expect(got.kind).toBe('message');
      if (got.kind === 'message') expect(got.message.body.case).toBe(kind);
    }
  });

  it('lets a later field_rule_ack (field 8, outside 1..5) win over telemetry, like protobuf-es', () => {
    const a = telemetryEnvelope(2).bytes;
    const ack = toBinary(RobotMessageSchema, create(RobotMessageSchema, { body: { case: 'fieldRuleAck', value: { version: 7n, applied: true } } }));
    const both = Buffer.concat([a, ack]);
    expect(fromBinary(RobotMessageSchema, both).body.case).toBe('fieldRuleAck');
    const got = deserializeRobotMessage(both);
    expect(got.kind).toBe('message');
    if (got.kind === 'message' && got.message.body.case === 'fieldRuleAck') expect(got.message.body.value.version).toBe(7n);
    else throw new Error('not a field rule ack');
  });

  it('skips unknown fields around the telemetry field', () => {
    const { bytes, batch } = telemetryEnvelope(4);
    // field 15 varint 300, field 16 fixed64, field 17 bytes "hi", field 18 fixed32
    const unknown = Buffer.from([0x78, 0xac, 0x02, 0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x8a, 0x01, 2, 0x68, 0x69, 0x95, 0x01, 1, 2, 3, 4]);
    const got = deserializeRobotMessage(Buffer.concat([unknown, bytes, unknown]));
    expect(got.kind).toBe('telemetry');
    if (got.kind === 'telemetry') expect(Buffer.from(got.batch).equals(Buffer.from(batch))).toBe(true);
  });

  it('returns an empty envelope as a message without a body', () => {
    const got = deserializeRobotMessage(new Uint8Array(0));
    expect(got.kind).toBe('message');
    if (got.kind === 'message') expect(got.message.body.case).toBeUndefined();
  });

  it('rejects malformed input', () => {
    const { bytes } = telemetryEnvelope(3);
    const bad: [string, Uint8Array][] = [
      ['truncated telemetry', bytes.subarray(0, bytes.length - 1)],
      ['length overruns', Uint8Array.from([0x12, 0x05, 0x0a])],
      ['truncated length varint', Uint8Array.from([0x12, 0x80])],
      ['truncated tag', Uint8Array.from([0x80])],
      ['field number 0', Uint8Array.from([0x02, 0x00])],
      ['start group', Uint8Array.from([0x13])],
      ['wire type 6', Uint8Array.from([0x16])],
      ['telemetry as varint', Uint8Array.from([0x10, 0x01])],
      ['hello as fixed32', Uint8Array.from([0x0d, 1, 2, 3, 4])],
      ['varint too long', Uint8Array.from([0x78, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])],
      ['fixed64 overruns', Uint8Array.from([0x79, 1, 2])],
    ];
    for (const [what, input] of bad) {
      expect(() => deserializeRobotMessage(input), what).toThrow(Error);
    }
  });

  it('never misreports random garbage: it throws, or agrees with protobuf-es on the oneof case', () => {
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const buf = Uint8Array.from({ length: 1 + Math.floor(rnd() * 40) }, () => Math.floor(rnd() * 256));
      let got;
      try {
        got = deserializeRobotMessage(buf);
      } catch (err) {
        expect(err).toBeInstanceOf(Error);
        continue;
      }
      if (got.kind === 'message') continue; // decoded by protobuf-es itself
      // A telemetry answer must be what protobuf-es also sees as the oneof case.
      let reference;
      try {
        reference = fromBinary(RobotMessageSchema, buf);
      } catch {
        continue; // protobuf-es rejects the inner batch, which the gateway leaves to the ingest worker
      }
      expect(reference.body.case).toBe('telemetry');
    }
  });
});

describe('envelope serializers', () => {
  it('frames raw batch bytes as a RobotMessage that protobuf-es decodes', () => {
    const { batch } = telemetryEnvelope(300);
    const env = encodeTelemetryEnvelope(batch);
    const decoded = fromBinary(RobotMessageSchema, env);
    expect(decoded.body.case).toBe('telemetry');
    expect(Buffer.from(serializeRobotInbound({ kind: 'telemetry', batch })).equals(env)).toBe(true);
  });

  it('round-trips GatewayMessage', () => {
    const msg = create(GatewayMessageSchema, {
      body: { case: 'command', value: { commandId: 'c', seq: 9n, issuedAtMs: 5n, action: { case: 'stop', value: { reason: 'r' } } } },
    });
    expect(deserializeGatewayMessage(serializeGatewayMessage(msg))).toEqual(msg);
  });
});
