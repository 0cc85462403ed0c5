/** JSON values as commands carry them (arguments, settings, configuration); msgpack-safe. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
