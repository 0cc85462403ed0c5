/**
 * An entity kind of the Agent read tools (`query-entities`, `get-entity`, `resolve`): everything the
 * tools need to know about one kind, declared once in one file under `kinds/`. The registry
 * (registry.ts) lists the kinds; the tools, the request schema (filters) and the OpenAPI
 * description (permissions) are built from that list, so a new kind is one more file plus one line.
 */
import type { TSchema } from '@sinclair/typebox';
import type { Permission } from '../../auth/permissions.js';
import type { AdvertisedProfiles } from '../../commands/advertised.js';
import type { CommandService } from '../../commands/service.js';
import type { MissionScheduling } from '../../missions/scheduling/scheduling-service.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Keyset } from '../../store/keyset.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import type { FleetRecord } from '../../store/records.js';
import type { ListLimit } from '../schemas/list.js';

/** Every kind the interface names, in the order it names them. */
export const KIND_NAMES = [
  'robot', 'feature', 'operation', 'mission_template', 'scheduled_mission', 'scheduled_command', 'fault', 'mission_history', 'field_rule', 'object',
] as const;
export type KindName = (typeof KIND_NAMES)[number];

/** What a kind reads from (one per gateway). */
export interface KindDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  link: Pick<RobotLink, 'isOnline'>;
  missions: MissionScheduling;
  advertised: AdvertisedProfiles;
  commands: Pick<CommandService, 'audit' | 'get'>;
  /** Latest telemetry snapshots (telemetry's; the read tools use a reader that decodes once per stored version). */
  snapshots: Pick<LatestSnapshots, 'latest'>;
}

/** The validated filter fields of a request (only the ones the kind declares are read). */
export type FilterValues = Readonly<Record<string, string | number | boolean | undefined>>;

/** A name the `resolve` tool can match. */
export interface Named {
  id: string;
  name: string;
}

/** One kind's declaration (see the module comment). `R` is the record its source pages, `V` its item view. */
export interface EntityKind<R, V, D = never> {
  name: KindName;
  /** The permission a key needs to read the kind (the read permission of its family). */
  permission: Permission;
  /** One line for the tool's OpenAPI description: what an item is and its order. */
  describe: string;
  /** Its filters: body fields of `query-entities`, by name (a name two kinds share has one schema). */
  filters: Readonly<Record<string, TSchema>>;
  limit: ListLimit;
  /** The item schema (named, with a `kind` literal), or null for a kind not served yet. */
  item: TSchema | null;
  /** The records matching the filters, in list order, from the module that owns them. */
  source(deps: KindDeps, fleet: Readonly<FleetRecord>, f: FilterValues): Keyset<R>;
  view(deps: KindDeps, r: R): V;
  /** `get-entity` for the kind: the schema of its detailed record and the lookup (404 for unknown or foreign ids). */
  detail?: {
    /** null: the kind has no detailed form yet. */
    schema: TSchema | null;
    /** `id` is undefined only where the kind allows it (the fleet's one operation). */
    get(deps: KindDeps, fleet: Readonly<FleetRecord>, id: string | undefined): D;
    /** True when `id` may be left out. */
    idOptional?: boolean;
  };
  /**
   * The entities `resolve` may match: every named entity of the fleet (a small kind), or, with
   * `lookup`, only those whose name equals one of `names` ignoring case (a large kind with a name
   * index). Neither: the kind is not resolvable.
   */
  names?(deps: KindDeps, fleet: Readonly<FleetRecord>): Iterable<Named>;
  lookup?(deps: KindDeps, fleet: Readonly<FleetRecord>, names: readonly string[]): Iterable<Named>;
}

/** A kind with its record and view types erased (what the registry holds). */
export type AnyKind = EntityKind<unknown, unknown, unknown>;

/**
 * Declares a kind, typed by its record and views, and erases them for the registry: the registry
 * only ever passes a kind the records its own `source` returned, so `view` sees its own `R`.
 */
export function defineKind<R, V, D = never>(k: EntityKind<R, V, D>): AnyKind {
  return k;
}
