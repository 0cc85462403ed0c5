/** Each robot's latest telemetry snapshot, read by the modules that do not own it (latest.ts). */
export { latestConditions, latestSnapshots, type LatestSnapshots } from './latest.js';
