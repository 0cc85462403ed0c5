/** LMDB key shapes of the field rules' `index` and `meta` entries (layout in records.ts). Private to this module. */

export const RULES_BY_FLEET = 'fieldRulesByFleet';
/** `fieldRulesByFleet/<fleet>/<directive>` in `index`. */
export const ruleIndexKey = (fleetId: string, directiveId: string): string => `${RULES_BY_FLEET}/${fleetId}/${directiveId}`;
/** `fieldRuleSetVersion/<fleet>` in `meta`: the fleet's rule set version. */
export const versionKey = (fleetId: string): string => `fieldRuleSetVersion/${fleetId}`;
