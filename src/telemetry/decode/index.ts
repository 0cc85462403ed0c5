/**
 * Decoding: raw TelemetryBatch frames packed into shared task slots (frame-packer.ts, task-slots.ts),
 * decoded by the piscina pool (decode-pool.ts, decode-worker.ts) or on the main thread (decode-task.ts,
 * live-decoder.ts) with the decoder select.ts picks (C++ addon, hand-rolled JS reader, reference), into
 * rows, snapshots, live JSON and Foxglove frames (worker-protocol.ts). Builds on sample/ only.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { createDecodePool } from './decode-pool.js';
export type { DecodePool } from './decode-pool.js';
export { decodeTaskOrFault } from './decode-task.js';
export { FramePacker } from './frame-packer.js';
export type { PackedBatch, PackerRobot } from './frame-packer.js';
export { LiveDecoder } from './live-decoder.js';
export { loadNative } from './native.js';
export type { NativeBinding, DecoderSetting } from './native.js';
export { setDecoderSetting } from './native.js';
export { chooseDecoder } from './select.js';
export type { DecoderKind, TaskDecoder } from './select.js';
export { copyBytes } from './shared-copy.js';
export { TaskSlots } from './task-slots.js';
export { FRAME_HEADER_BYTES } from './worker-protocol.js';
export type { FoxgloveBatch, DecodeResult, LiveBatch } from './worker-protocol.js';
