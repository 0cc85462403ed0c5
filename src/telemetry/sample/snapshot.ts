/**
 * The latest telemetry per robot, as kept in LMDB (`snapshots` db) and served by GET /v1/robots.
 * Written by the ingest path (src/telemetry/ingest) from decoded samples; read on the REST path.
 *
 * Its type is derived from the field table: each row's `snapshot` path holds a value of the row's
 * type (sample-table.ts documents each column), and the `mission` group is null while the robot runs
 * no mission (snapshot-codec.ts).
 */
import type { HealthLevelName, RowType, SampleTable } from './sample-table.js';

/** The JavaScript value a snapshot holds for a column of each RowBinary type. */
type SnapshotValue<R extends RowType> = R extends 'String' ? string
  : R extends 'Int64' | 'Float64' | 'Float32' | 'Int32' ? number
  : R extends 'UInt8' ? boolean
  : R extends 'Enum8' ? HealthLevelName
  : string[];

/** `{ a: { b: V } }` for the path `a.b`. */
type AtPath<P extends string, V> = P extends `${infer Head}.${infer Rest}` ? { [K in Head]: AtPath<Rest, V> } : { [K in P]: V };

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The intersection of nested objects as one plain object type (arrays and scalars as they are). */
type Flatten<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]: Flatten<T[K]> } : T;

/** One object type per row (distributed over the union of rows). */
type RowObject<F> = F extends { snapshot: infer P extends string; rowType: infer R extends RowType } ? AtPath<P, SnapshotValue<R>> : never;
type AllFields = Flatten<UnionToIntersection<RowObject<SampleTable[number]>>>;

export type TelemetrySnapshot = Omit<AllFields, 'mission'> & { mission: AllFields['mission'] | null };
