/**
 * Mission templates: nested REST routes under the fleet path (spec: Mission templates endpoints).
 * The spec leaves step configuration, parameters and prerequisites open; the gateway's fields:
 *   steps[]        {stepId, kind, config}: `kind` names what the robot does (e.g. `cover_area`,
 *                  `drive_to`, `dock`); `config` is handed to the robot as given.
 *   parameters     free-form values the robot receives with every run of the template.
 *   prerequisites  {minBatteryPct?, requiresDocked?}: checked before a robot is chosen.
 *   priority       integer, higher first when schedules compete for robots.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { EXPECTED_KEYWORD } from './keywords.js';
import { named } from './named.js';

export const TemplatePathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, mission_id: Uuid }, { additionalProperties: false });
export type TemplatePathParams = Static<typeof TemplatePathParams>;

const StepId = Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', [EXPECTED_KEYWORD]: '1 to 64 letters, digits, \'_\', \'.\' or \'-\'', description: 'Stable id of the step within the template; minted (UUID) when omitted.' });
const StepKind = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', [EXPECTED_KEYWORD]: 'a lower-case letter, then up to 63 lower-case letters, digits or \'_\'', description: 'What the robot does in this step, e.g. `cover_area`, `drive_to`, `dock`.' });
const StepConfig = FreeForm({ description: 'Step configuration, handed to the robot as given.' });
const Capability = Type.String({ minLength: 1, maxLength: 64 });
const Parameters = FreeForm({ description: 'Values the robot receives with every run.' });

export const Prerequisites = named('Prerequisites', Type.Object(
  {
    minBatteryPct: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'A robot below this battery level is not chosen.' })),
    requiresDocked: Type.Optional(Type.Boolean({ description: 'Only a docked robot is chosen.' })),
  },
  { additionalProperties: false },
));

const Priority = Type.Integer({ minimum: -1000, maximum: 1000, description: 'Higher runs first when schedules compete for robots; default 0.' });
const Roster = Type.Array(Uuid, { maxItems: 1000, description: 'Robots allowed to take the template; empty: every active robot of the fleet.' });
const Capabilities = Type.Array(Capability, { maxItems: 64, description: 'Capabilities a robot must advertise to take the template.' });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const TemplateCreateBody = named('MissionTemplateCreateRequest', Type.Object(
  {
    name: Name,
    featureId: Uuid,
    enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
    capabilities: Type.Optional(Capabilities),
    roster: Type.Optional(Roster),
    steps: Type.Array(Type.Object({ stepId: Type.Optional(StepId), kind: StepKind, config: Type.Optional(StepConfig) }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
    parameters: Type.Optional(Parameters),
    prerequisites: Type.Optional(Prerequisites),
    priority: Type.Optional(Priority),
  },
  { additionalProperties: false },
));
export type TemplateCreateBody = Static<typeof TemplateCreateBody>;

export const TemplateUpdateBody = named('MissionTemplateUpdateRequest', Type.Object(
  {
    name: Type.Optional(Name),
    featureId: Type.Optional(Uuid),
    capabilities: Type.Optional(Capabilities),
    roster: Type.Optional(Roster),
    steps: Type.Optional(
      Type.Array(Type.Object({ stepId: Type.Optional(StepId), kind: Type.Optional(StepKind), config: Type.Optional(StepConfig) }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: 100,
        description: 'The new step list, in order. A step with the stepId of an existing step keeps its kind and config unless given (omitted configuration is preserved); a step without a known stepId is new and needs kind; existing steps not listed are removed.',
      }),
    ),
    parameters: Type.Optional(Parameters),
    prerequisites: Type.Optional(Prerequisites),
    priority: Type.Optional(Priority),
  },
  { additionalProperties: false, description: 'Omitted fields are kept. The enabled state has its own route.' },
));
export type TemplateUpdateBody = Static<typeof TemplateUpdateBody>;

export const EnabledBody = named('MissionTemplateEnabledRequest', Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }));
export type EnabledBody = Static<typeof EnabledBody>;

export const TemplateView = named('MissionTemplate', Type.Object(
  {
    missionId: Uuid,
    name: Type.String(),
    featureId: Nullable(Uuid),
    enabled: Type.Boolean(),
    capabilities: Type.Array(Type.String()),
    roster: Type.Array(Uuid),
    steps: Type.Array(Type.Object({ stepId: Type.String(), kind: Type.String(), config: StepConfig }, { additionalProperties: false })),
    parameters: Parameters,
    prerequisites: Prerequisites,
    priority: Type.Integer(),
    version: Type.Integer({ description: 'Increments on every change.' }),
    createdAtMs: Type.Integer(),
    updatedAtMs: Type.Integer(),
  },
  { additionalProperties: false },
));
export type TemplateView = Static<typeof TemplateView>;

export const TEMPLATES_LIMIT: ListLimit = { default: 100, max: 500 };

export const TemplateListQuery = Type.Object(
  { limit: Type.Optional(LimitParam(TEMPLATES_LIMIT)), cursor: Type.Optional(CursorParam()) },
  { additionalProperties: false },
);
export type TemplateListQuery = Static<typeof TemplateListQuery>;

export const TemplateListResponse = Page(
  'MissionTemplateList',
  Type.Object({ missionId: Uuid, name: Type.String(), featureId: Nullable(Uuid), enabled: Type.Boolean(), priority: Type.Integer() }, { additionalProperties: false }),
  'Ordered by missionId.',
);
export type TemplateListResponse = Static<typeof TemplateListResponse>;

/** Spec: Runtime synchronization of template changes; Errors (non-error 202). */
export const TemplateMutationResponse = named('MissionTemplateMutationResult', Type.Object(
  {
    success: Type.Boolean({ description: 'False while runtime synchronization is pending (202).' }),
    persistenceState: Type.Literal('committed', { description: 'The change is in the database; it is never rolled back.' }),
    runtimeSync: Type.Unsafe<'applied' | 'pending'>({ type: 'string', enum: ['applied', 'pending'], description: '`applied`: the live operation adopted the change; `pending`: not yet (202).' }),
    runtimeSyncError: Type.Optional(Type.String({ description: 'With `pending`: why. Inspect before retrying; the change is committed.' })),
    missionId: Uuid,
    operationId: Uuid,
    deleted: Type.Optional(Type.Literal(true)),
    template: Type.Optional(TemplateView),
  },
  { additionalProperties: false },
));
export type TemplateMutationResponse = Static<typeof TemplateMutationResponse>;
