/**
 * High/low water-mark gate over the ingest's queued bytes. Crossing the high mark reports `true`
 * (pause the robot links), falling under the low mark reports `false` (resume). The gap between the
 * marks is the hysteresis that keeps robots from flapping between paused and running.
 */
export class WatermarkGate {
  private paused = false;
  private readonly listeners: ((paused: boolean) => void)[] = [];

  constructor(
    readonly highWaterBytes: number,
    readonly lowWaterBytes: number,
  ) {
    if (!(lowWaterBytes < highWaterBytes)) throw new Error('lowWaterBytes must be below highWaterBytes');
  }

  get isPaused(): boolean {
    return this.paused;
  }

  onChange(cb: (paused: boolean) => void): void {
    this.listeners.push(cb);
  }

  /** Re-evaluates the gate for the current queued bytes; fires listeners on a transition only. */
  update(queuedBytes: number): void {
    if (!this.paused && queuedBytes >= this.highWaterBytes) this.set(true);
    else if (this.paused && queuedBytes <= this.lowWaterBytes) this.set(false);
  }

  private set(paused: boolean): void {
    this.paused = paused;
    for (const cb of this.listeners) cb(paused);
  }
}
