/**
 * One sample's values by column name (sample-table.ts), as the reference decoder and the snapshot
 * reader hold them: a plain record, so the table can drive both without per-field code.
 */
export type RowValue = string | number | bigint | boolean | readonly string[];
export type RowValues = Record<string, RowValue>;
