/**
 * Mission templates (spec: Mission templates endpoints): list, read, create (Idempotency-Key
 * required, server mints missionId), edit (omitted step configuration preserved), delete (409 while
 * a schedule references the template or a robot runs it), enable/disable.
 *
 * Every mutation commits first, then waits briefly for the live operation runtime to adopt it:
 * `runtimeSync: "applied"` (200/201), or 202 with `success: false, persistenceState: "committed",
 * runtimeSync: "pending", runtimeSyncError` — the change is never rolled back.
 */
import type { IdempotencyClaims } from '../../idempotency/index.js';
import type { EventLog } from '../../events/index.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { withIdempotency } from '../../idempotency/index.js';
import { faultPoint } from '../../missions/fault-points.js';
import { getOperation } from '../../missions/catalog/operation.js';
import type { TemplateRecord } from '../../missions/catalog/records.js';
import { SYNC_UNCONFIRMED, type OperationRuntime, type SyncResult } from '../../missions/catalog/runtime.js';
import type { AdvertisedCapabilities } from '../../missions/catalog/robot-capabilities.js';
import { createTemplate, deleteTemplate, requireTemplate, setTemplateEnabled, templatesOf, updateTemplate } from '../../missions/catalog/templates.js';
import { templateUsers } from '../../missions/scheduling/template-users.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineList, type ListQuery } from '../list-reader.js';
import { FleetPathParams } from '../schemas/features.js';
import {
  EnabledBody,
  TemplateCreateBody,
  TEMPLATES_LIMIT,
  TemplateListQuery,
  TemplateListResponse,
  TemplateMutationResponse,
  TemplatePathParams,
  TemplateUpdateBody,
  TemplateView,
} from '../schemas/templates.js';
import { fleetFromPath } from '../fleet-scope.js';
import { templateView } from '../template-view.js';
import { KIB } from '../schemas/body-bounds.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates';

/** The 200/201 or 202 answer of a committed template change. */
export function mutationResult<S extends 200 | 201>(
  okStatus: S,
  sync: SyncResult,
  base: { missionId: string; operationId: string; template?: TemplateRecord; deleted?: true },
): { status: S | 202; body: TemplateMutationResponse } {
  const body: TemplateMutationResponse = {
    success: sync.runtimeSync === 'applied',
    persistenceState: 'committed',
    runtimeSync: sync.runtimeSync,
    ...(sync.runtimeSync === 'pending' ? { runtimeSyncError: sync.runtimeSyncError } : {}),
    missionId: base.missionId,
    operationId: base.operationId,
    ...(base.deleted ? { deleted: true as const } : {}),
    ...(base.template ? { template: templateView(base.template) } : {}),
  };
  return { status: sync.runtimeSync === 'applied' ? okStatus : 202, body };
}

const MUTATION_ERRORS = ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'template_not_found'] as const;
/** The response of a template change the live operation adopted. */
const applied = (what: string) => ({ description: `${what}; the live operation adopted it (runtimeSync \`applied\`).`, schema: TemplateMutationResponse });
const PENDING = { description: 'Committed, but the live operation has not adopted it yet (runtimeSync `pending`); not rolled back.', schema: TemplateMutationResponse };

/** Template routes. */
export function templateRoutes(deps: { store: Store; identity: IdentityReads; events: EventLog; idempotency: IdempotencyClaims; runtime: OperationRuntime; advertised: AdvertisedCapabilities }): RouteDef[] {
  const { store, identity, events, idempotency, runtime, advertised } = deps;
  const tags = ['Mission templates'];
  const operationIdOf = (fleetId: string): string => getOperation(store, fleetId)?.operationId ?? '';
  const templateList = defineList<ListQuery & TemplateListQuery, TemplateRecord, TemplateListResponse['items'][number]>({
    kind: 'mission-templates',
    limit: TEMPLATES_LIMIT,
    filters: () => ({}),
    source: (fleet) => templatesOf(store, fleet.fleetId),
    view: (t) => ({ missionId: t.missionId, name: t.name, featureId: t.featureId, enabled: t.enabled, priority: t.priority }),
  });
  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listMissionTemplates',
      summary: 'The fleet\'s mission templates (the steps of its operation).',
      tags,
      auth: 'missions:read',
      params: FleetPathParams,
      query: TemplateListQuery,
      responses: { 200: { description: 'Templates, ordered by missionId.', schema: TemplateListResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => ({ status: 200, body: templateList.read(identity, auth, { ...params, ...query }) })),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{mission_id}`,
      operationId: 'getMissionTemplate',
      summary: 'One template with enabled state, steps, parameters, capabilities, roster and prerequisites.',
      tags,
      auth: 'missions:read',
      params: TemplatePathParams,
      responses: { 200: { description: 'The template.', schema: TemplateView } },
      errors: [...MUTATION_ERRORS],
    }).handle(
      ({ auth, params }) => {
        const fleet = fleetFromPath(identity, auth, params);
        return { status: 200, body: templateView(requireTemplate(store, fleet.fleetId, params.mission_id)) };
      },
    ),
    defineRoute({
      method: 'POST',
      path: BASE,
      operationId: 'createMissionTemplate',
      summary: 'Create a template (requires Idempotency-Key; the server mints missionId). The fleet\'s operation is created with its first template.',
      tags,
      auth: 'missions:write',
      params: FleetPathParams,
      body: TemplateCreateBody,
      maxBodyBytes: 256 * KIB,
      idempotencyKey: 'required',
      responses: { 201: applied('Created'), 202: PENDING },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'feature_not_found', 'robot_not_active_member', 'robot_missing_capability', 'idempotency_key_required', 'idempotency_key_invalid', 'idempotency_in_progress', 'idempotency_body_mismatch'],
    }).handle(
      (ctx) => {
        const fleet = fleetFromPath(identity, ctx.auth, ctx.params);
        return withIdempotency(
          idempotency,
          { actor: ctx.auth.apiKeyId, orgId: fleet.orgId, fleetId: fleet.fleetId, endpoint: `POST ${BASE}` },
          ctx.idempotencyKey,
          ctx.body,
          async (commit) => {
            // The answer commits with the template: a failure or crash after the commit answers it,
            // and a retry gets it back instead of creating a second template.
            const { template, operation } = await createTemplate(store, events, advertised, fleet, ctx.body, ctx.nowMs, (t, op) => {
              const r = mutationResult(201, SYNC_UNCONFIRMED, { missionId: t.missionId, operationId: op.operationId, template: t });
              commit.inTxn({ status: r.status, body: r.body });
            });
            faultPoint('mission-tool.after-commit');
            const sync = await runtime.awaitSync(fleet.fleetId);
            return mutationResult(201, sync, { missionId: template.missionId, operationId: operation.operationId, template });
          },
        );
      },
    ),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/{mission_id}`,
      operationId: 'updateMissionTemplate',
      summary: 'Edit a template; omitted fields and omitted step configuration are preserved.',
      tags,
      auth: 'missions:write',
      params: TemplatePathParams,
      body: TemplateUpdateBody,
      maxBodyBytes: 256 * KIB,
      responses: { 200: applied('Edited'), 202: PENDING },
      errors: [...MUTATION_ERRORS, 'feature_not_found', 'robot_not_active_member', 'robot_missing_capability'],
    }).handle(
      async ({ auth, params, body, nowMs }) => {
        const fleet = fleetFromPath(identity, auth, params);
        const template = await updateTemplate(store, events, advertised, fleet.fleetId, params.mission_id, body, nowMs);
        const sync = await runtime.awaitSync(fleet.fleetId);
        return mutationResult(200, sync, { missionId: template.missionId, operationId: operationIdOf(fleet.fleetId), template });
      },
    ),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{mission_id}`,
      operationId: 'deleteMissionTemplate',
      summary: 'Delete a template; 409 while a schedule references it or a robot is running it.',
      tags,
      auth: 'missions:write',
      params: TemplatePathParams,
      responses: { 200: applied('Deleted'), 202: PENDING },
      errors: [...MUTATION_ERRORS, 'template_in_use'],
    }).handle(
      async ({ auth, params, nowMs }) => {
        const fleet = fleetFromPath(identity, auth, params);
        await deleteTemplate(store, events, templateUsers(store), fleet.fleetId, params.mission_id, nowMs);
        const sync = await runtime.awaitSync(fleet.fleetId);
        return mutationResult(200, sync, { missionId: params.mission_id, operationId: operationIdOf(fleet.fleetId), deleted: true });
      },
    ),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/{mission_id}/enabled`,
      operationId: 'setMissionTemplateEnabled',
      summary: 'Enable or disable dispatch of a template.',
      tags,
      auth: 'missions:write',
      params: TemplatePathParams,
      body: EnabledBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: applied('Set'), 202: PENDING },
      errors: [...MUTATION_ERRORS],
    }).handle(
      async ({ auth, params, body, nowMs }) => {
        const fleet = fleetFromPath(identity, auth, params);
        const template = await setTemplateEnabled(store, events, fleet.fleetId, params.mission_id, body.enabled, nowMs);
        const sync = await runtime.awaitSync(fleet.fleetId);
        return mutationResult(200, sync, { missionId: template.missionId, operationId: operationIdOf(fleet.fleetId), template });
      },
    ),
  ];
}
