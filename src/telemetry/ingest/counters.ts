/**
 * The ingest's own counters, shared by the parts that count (push, the live publisher, the result
 * applier); the ingest's stats() reports them as they are, next to the insert queue's.
 */
/** Counters kept by the ingest itself; each is a field of TelemetryIngestStats of the same name. */
export interface IngestCounters {
  framesIn: number;
  bytesIn: number;
  samplesIn: number;
  batches: number;
  corruptFrames: number;
  workerErrors: number;
  framesLost: number;
  framesRejected: number;
  liveMessages: number;
  liveErrors: number;
  sequencedBatches: number;
  batchesInline: number;
  batchesWithoutSlot: number;
}

/** All counters at zero. */
export function newIngestCounters(): IngestCounters {
  return {
    framesIn: 0, bytesIn: 0, samplesIn: 0, batches: 0, corruptFrames: 0, workerErrors: 0, framesLost: 0,
    framesRejected: 0, liveMessages: 0, liveErrors: 0, sequencedBatches: 0, batchesInline: 0, batchesWithoutSlot: 0,
  };
}

