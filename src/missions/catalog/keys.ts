/** LMDB key shapes of the mission catalog's `index` entries. Private to src/missions/catalog. */

/** `featuresByFleet/<fleet>/<feature>` in `index`. */
export const FEATURES_BY_FLEET = 'featuresByFleet';
/** A feature's entry in its fleet's list. */
export const featureIndexKey = (fleetId: string, featureId: string): string => `${FEATURES_BY_FLEET}/${fleetId}/${featureId}`;
/** `templatesByFeature/<feature>/<missionId>`: a template using a feature (feature delete refuses while one exists). */
export const featureUseKey = (featureId: string, missionId: string): string => `templatesByFeature/${featureId}/${missionId}`;

/** `templatesByFleet/<fleet>/<missionId>` in `index`. */
export const TEMPLATES_BY_FLEET = 'templatesByFleet';
/** A template's entry in its fleet's list. */
export const templateIndexKey = (fleetId: string, missionId: string): string => `${TEMPLATES_BY_FLEET}/${fleetId}/${missionId}`;
