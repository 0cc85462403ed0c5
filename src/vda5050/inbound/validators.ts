/**
 * The inbound message schemas compiled by ajv, once per process (on first use), shared by every gate.
 * Strict like the REST body validator (src/http/validation.ts): no coercion, no defaults written into
 * the message, numbers finite (a JSON `1e400` parses to Infinity and is refused).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ConnectionSchema, type Vda5050Connection } from './connection-schema.js';
import { FactsheetSchema, type Vda5050Factsheet } from './factsheet-schema.js';
import { StateSchema, type Vda5050State } from './state-schema.js';
import { VisualizationSchema, type Vda5050Visualization } from './visualization-schema.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some builds.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv, formats: string[]) => Ajv;

/** The topics a robot publishes to master control. */
export const INBOUND_TOPICS = ['connection', 'state', 'visualization', 'factsheet'] as const;
export type InboundTopic = (typeof INBOUND_TOPICS)[number];

/** Each inbound topic's validated message type. */
export interface InboundMessages {
  connection: Vda5050Connection;
  state: Vda5050State;
  visualization: Vda5050Visualization;
  factsheet: Vda5050Factsheet;
}

/** Each inbound topic's schema (the TypeBox objects the types above are derived from). */
export const INBOUND_SCHEMAS: { readonly [T in InboundTopic]: TSchema } = {
  connection: ConnectionSchema,
  state: StateSchema,
  visualization: VisualizationSchema,
  factsheet: FactsheetSchema,
};

export type InboundValidators = { readonly [T in InboundTopic]: ValidateFunction<InboundMessages[T]> };

let compiled: InboundValidators | undefined;

/** The compiled validator of each topic; the first call compiles them, later ones return the same. */
export function inboundValidators(): InboundValidators {
  if (compiled !== undefined) return compiled;
  const ajv = addFormats(new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false, validateFormats: true }), ['date-time']);
  compiled = {
    connection: ajv.compile<Vda5050Connection>(ConnectionSchema),
    state: ajv.compile<Vda5050State>(StateSchema),
    visualization: ajv.compile<Vda5050Visualization>(VisualizationSchema),
    factsheet: ajv.compile<Vda5050Factsheet>(FactsheetSchema),
  };
  return compiled;
}

/** The first error as `field.path: problem` (no value echoed: a robot's payload may hold anything). */
export function firstProblem(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (e === undefined) return 'invalid';
  const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
  const at = `${e.instancePath}${missing === undefined ? '' : `/${missing}`}`.replace(/^\//, '').replace(/\//g, '.');
  const what = missing === undefined ? (e.message ?? 'is invalid') : 'is required';
  return at === '' ? what : `${at} ${what}`;
}
