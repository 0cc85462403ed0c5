/**
 * Robot command policies: what each robot advertised in its Hello (modes, actions with argument
 * schemas, setting ranges, go-to area, request/response opt-ins), compiled for fast checks.
 *
 * Compilation cost is paid once per distinct policy, never per request: a policy is keyed by the
 * SHA-256 of its protobuf bytes, so a fleet of robots advertising the same policy shares one
 * compiled copy, and a reconnect with an unchanged policy compiles nothing. Bounds: at most
 * {@link MAX_COMPILED_POLICIES} distinct compiled policies (least recently advertised evicted; a robot
 * keeps its reference, so only memory of unused ones is reclaimed); argument schemas above
 * {@link MAX_SCHEMA_BYTES} are not compiled and the action is refused.
 */
import { createHash } from 'node:crypto';
import { toBinary } from '@bufbuild/protobuf';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { CommandPolicySchema, SettingSpec_Kind, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';

export const MAX_COMPILED_POLICIES = 256;
export const MAX_SCHEMA_BYTES = 64 * 1024;

export interface SettingRule {
  kind: 'number' | 'boolean' | 'string' | 'invalid';
  min: number | null;
  max: number | null;
  /** Allowed string values; empty: any string. */
  allowed: readonly string[];
}

/** An advertised action: its compiled argument validator, or why it cannot be used. */
export type ActionRule = { validate: ValidateFunction } | { invalid: string };

export interface CompiledPolicy {
  readonly modes: ReadonlySet<string>;
  readonly actions: ReadonlyMap<string, ActionRule>;
  readonly settings: ReadonlyMap<string, SettingRule>;
  /** Go-to area ring (lat/lon), or null: the robot does not accept go-to. */
  readonly goToArea: readonly { lat: number; lon: number }[] | null;
  readonly remoteConfig: boolean;
  readonly onboardSettings: boolean;
}

function settingRule(s: CommandPolicy['settings'][number]): SettingRule {
  const range = s.hasRange && Number.isFinite(s.min) && Number.isFinite(s.max) && s.min <= s.max;
  switch (s.kind) {
    case SettingSpec_Kind.NUMBER:
      return { kind: 'number', min: range ? s.min : null, max: range ? s.max : null, allowed: [] };
    case SettingSpec_Kind.BOOLEAN:
      return { kind: 'boolean', min: null, max: null, allowed: [] };
    case SettingSpec_Kind.STRING:
      return { kind: 'string', min: null, max: null, allowed: [...s.allowedValues] };
    default:
      return { kind: 'invalid', min: null, max: null, allowed: [] };
  }
}

/**
 * Compiles a policy. Robots are authenticated but their schemas are still input: strict mode is off
 * (unknown keywords are ignored rather than failing a whole policy), remote `$ref`s cannot load
 * (no loader), and a schema that does not compile makes only its own action unusable.
 */
export function compilePolicy(ajv: Ajv2020, p: CommandPolicy): CompiledPolicy {
  const actions = new Map<string, ActionRule>();
  for (const a of p.actions) {
    if (a.name === '') continue;
    const text = a.argumentsSchemaJson.trim();
    if (text.length > MAX_SCHEMA_BYTES) {
      actions.set(a.name, { invalid: 'arguments schema too large' });
      continue;
    }
    try {
      // Empty schema text: the action takes no arguments.
      const schema: unknown = text === '' ? { type: 'object', maxProperties: 0 } : JSON.parse(text);
      if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('not an object');
      actions.set(a.name, { validate: ajv.compile(schema) });
    } catch (err) {
      actions.set(a.name, { invalid: `arguments schema does not compile (${err instanceof Error ? err.message : String(err)})` });
    }
  }
  const ring = p.goToArea?.ring ?? [];
  const valid = ring.length >= 3 && ring.every((g) => Number.isFinite(g.latitude) && Number.isFinite(g.longitude));
  return {
    modes: new Set(p.allowedModes),
    actions,
    settings: new Map(p.settings.filter((s) => s.key !== '').map((s) => [s.key, settingRule(s)])),
    goToArea: valid ? ring.map((g) => ({ lat: g.latitude, lon: g.longitude })) : null,
    remoteConfig: p.remoteConfig,
    onboardSettings: p.onboardSettings,
  };
}

/** Robot id -> its current compiled policy, with compiled policies shared by content. */
export class PolicyRegistry {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  /** digest -> compiled policy, in least-recently-advertised order. */
  private readonly byDigest = new Map<string, CompiledPolicy>();
  /** null: the robot connected without a policy. */
  private readonly byRobot = new Map<string, CompiledPolicy | null>();
  /** Policies compiled since start (a test and a stat: reconnects must not recompile). */
  compiled = 0;

  /** Records the policy of a robot's latest Hello (undefined: it sent none). */
  set(robotId: string, policy: CommandPolicy | undefined): void {
    if (!policy) {
      this.byRobot.set(robotId, null);
      return;
    }
    const digest = createHash('sha256').update(toBinary(CommandPolicySchema, policy)).digest('hex');
    let compiled = this.byDigest.get(digest);
    if (compiled) {
      this.byDigest.delete(digest);
    } else {
      compiled = compilePolicy(this.ajv, policy);
      this.compiled++;
      // Validators stay referenced by robots using them; dropping the ajv cache entry is enough.
      this.ajv.removeSchema();
    }
    this.byDigest.set(digest, compiled);
    while (this.byDigest.size > MAX_COMPILED_POLICIES) {
      const oldest = this.byDigest.keys().next().value;
      if (oldest === undefined) break;
      this.byDigest.delete(oldest);
    }
    this.byRobot.set(robotId, compiled);
  }

  /** The robot's policy; null when it advertised none, undefined when it has not connected since start. */
  get(robotId: string): CompiledPolicy | null | undefined {
    return this.byRobot.get(robotId);
  }
}
