/**
 * The catalog's records (templates, each fleet's operation) as the modules built on it read them: the
 * dispatcher and robot selection call these functions instead of reading the catalog's databases.
 */
import type { Store } from '../../store/lmdb.js';
import { getOperation } from './operation.js';
import type { OperationRecord, TemplateRecord } from './records.js';
import { getTemplate } from './templates.js';

/** Reads of the catalog's records. */
export interface CatalogReads {
  /** A template by id (any fleet), or undefined. */
  template(missionId: string): TemplateRecord | undefined;
  /** The fleet's stored operation, or undefined. */
  operation(fleetId: string): OperationRecord | undefined;
}

/** The catalog's reads over `store` (the catalog plugin provides them as part `catalog`). */
export function catalogReads(store: Store): CatalogReads {
  return {
    template: (missionId) => getTemplate(store, missionId),
    operation: (fleetId) => getOperation(store, fleetId),
  };
}
