// Preload for a gateway under a benchmark: V8's sampling heap profiler on the main thread, for
// ALLOC_PROFILE_SECONDS (30) seconds starting ALLOC_PROFILE_START_S (45) seconds after start, written
// as JSON (a .heapprofile) to ALLOC_PROFILE_OUT. Objects the young and the old GC collected are
// included, so the profile is what was allocated, not what survived. Summary: bench/alloc-summary.mjs.
//
//   node bench/telemetry-realistic.mjs ... --gateway-env NODE_OPTIONS=--import=./bench/lib/alloc-sampler.mjs,ALLOC_PROFILE_OUT=/tmp/a.heapprofile
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

const out = process.env.ALLOC_PROFILE_OUT;
if (isMainThread && out) {
  const startS = Number(process.env.ALLOC_PROFILE_START_S ?? 45);
  const seconds = Number(process.env.ALLOC_PROFILE_SECONDS ?? 30);
  const session = new Session();
  session.connect();
  setTimeout(() => {
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    setTimeout(() => {
      session.post('HeapProfiler.stopSampling', (err, r) => {
        if (err) process.stderr.write(`alloc-sampler: ${err.message}\n`);
        else void writeFile(out, JSON.stringify({ seconds, profile: r.profile }));
      });
    }, seconds * 1000).unref();
  }, startS * 1000).unref();
}
