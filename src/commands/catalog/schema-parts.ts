/** TypeBox pieces the declarations share. */
import { Type } from '@sinclair/typebox';
import type { JsonObject } from '../json.js';

/** A JSON object the gateway forwards without a schema of its own. */
export const JsonObjectSchema = () => Type.Unsafe<JsonObject>(Type.Object({}, { additionalProperties: true }));

/** No arguments. */
export const NoArgs = () => Type.Object({}, { additionalProperties: false });

/** No request fields. */
export const NoFields = () => Type.Object({});

/** Setting values: key -> string, number or boolean. */
export const SettingValuesSchema = () => Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]));
