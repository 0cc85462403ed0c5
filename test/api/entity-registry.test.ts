// The entity kind registry of the Agent read tools (src/api/entities/registry.ts), without sockets:
// every kind the interface names has exactly one declaration, its read permission is the one of its
// family (the table the OpenAPI descriptions publish), filters have one schema per name and say which
// kinds take them, and the item and detail schemas are closed objects tagged with their kind.
import { describe, expect, it } from 'vitest';
import { KIND_NAMES } from '../../src/api/entities/kind.js';
import { DETAIL_KINDS, FILTERS, filterProperties, KINDS, permissionTable, RESOLVABLE_KINDS } from '../../src/api/entities/registry.js';

describe('entity kind registry', () => {
  it('declares every kind of the interface once, with the permission of its family', () => {
    expect(KINDS.map((k) => k.name)).toEqual([...KIND_NAMES]);
    expect(Object.fromEntries(KINDS.map((k) => [k.name, k.permission]))).toEqual({
      robot: 'robots:read',
      feature: 'features:read',
      operation: 'operations:read',
      mission_template: 'missions:read',
      scheduled_mission: 'missions:read',
      scheduled_command: 'missions:read',
      fault: 'robots:read',
      mission_history: 'history:read',
      field_rule: 'features:read',
      object: 'robots:read',
    });
    expect(permissionTable()).toContain('`mission_history` (`history:read`)');
  });

  it('serves get-entity and resolve for the kinds the interface lists', () => {
    expect(DETAIL_KINDS).toEqual(['robot', 'feature', 'operation', 'mission_template', 'field_rule', 'object']);
    expect(RESOLVABLE_KINDS).toEqual(['robot', 'feature', 'operation', 'mission_template']);
  });

  it('publishes each filter once, naming the kinds that take it', () => {
    expect(FILTERS.get('capability')?.kinds).toEqual(['robot', 'mission_template']);
    expect(FILTERS.get('robot_id')?.kinds).toEqual(['scheduled_mission', 'scheduled_command', 'fault', 'mission_history', 'object']);
    expect(FILTERS.get('enabled')?.kinds).toEqual(['mission_template', 'field_rule']);
    const props = filterProperties();
    expect(props.online?.description).toMatch(/Filter of kind robot\.$/);
    expect(props.status?.description).toMatch(/Filter of kinds scheduled_mission, scheduled_command\.$/);
  });

  it('tags closed item and detail schemas with their kind', () => {
    for (const k of KINDS) {
      const schemas = [k.item, k.detail?.schema ?? null].filter((s) => s !== null);
      expect(k.item, k.name).not.toBeNull();
      for (const s of schemas) {
        expect(s.additionalProperties, k.name).toBe(false);
        expect(s.properties.kind.const, k.name).toBe(k.name);
      }
    }
  });
});
