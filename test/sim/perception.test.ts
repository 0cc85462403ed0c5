/** Simulated perception (src/sim/perception.ts) and the mission in simulated samples (src/sim/missions.ts). */
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { MissionStartSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { SimMissionRunner } from '../../src/sim/missions.js';
import { PERCEPTION_EVERY_MS, SimPerception, worldObjects } from '../../src/sim/perception.js';
import { RobotModel } from '../../src/sim/robot-model.js';

type Sent = { detections: { trackId: string; objectClass: string; lengthM: number }[] };

describe('simulated perception', () => {
  it('reports the world objects in range once per period, with a track id kept while in range and a new one after', () => {
    const model = new RobotModel('00000000-0000-4000-8000-000000000001', 0);
    const target = worldObjects(0).find((o) => o.objectClass === 'pallet')!;
    model.x = target.x;
    model.y = target.y;
    const frames: Sent[] = [];
    const p = new SimPerception('00000000-0000-4000-8000-000000000001', model, (f) => (frames.push(f as Sent), true));
    p.tick(1_000_000);
    p.tick(1_000_000 + PERCEPTION_EVERY_MS / 2); // not due yet
    p.tick(1_000_000 + PERCEPTION_EVERY_MS);
    expect(frames).toHaveLength(2);
    const pallet = (f: Sent) => f.detections.find((d) => d.objectClass === 'pallet' && d.lengthM === 1.2)!;
    expect(pallet(frames[0]!).trackId).toBe(pallet(frames[1]!).trackId);
    for (const f of frames) expect(f.detections.length).toBeLessThan(6);
    // Out of range of everything (beyond the depot edge), then back: a new track.
    model.x = 10_000;
    p.tick(1_000_000 + 2 * PERCEPTION_EVERY_MS);
    expect(frames).toHaveLength(2);
    model.x = target.x;
    p.tick(1_000_000 + 3 * PERCEPTION_EVERY_MS);
    expect(pallet(frames[2]!).trackId).not.toBe(pallet(frames[0]!).trackId);
  });

  it('a running mission is in every sample; none when idle', () => {
    const model = new RobotModel('00000000-0000-4000-8000-000000000002', 1);
    let now = 1000;
    const runner = new SimMissionRunner(model, () => true, () => now);
    expect(runner.sampleMission()).toBeNull();
    runner.start(create(MissionStartSchema, { runId: 'run-1', missionId: 'm', steps: [{ kind: 'wait', configJson: '{"seconds":2}' }] }));
    now += 1000;
    runner.tick();
    expect(runner.sampleMission()).toMatchObject({ runId: 'run-1', missionState: 'running', stepIndex: 0 });
    expect(runner.sampleMission()!.progressPct).toBeCloseTo(50, 0);
    now += 1500;
    runner.tick();
    expect(runner.sampleMission()).toBeNull();
  });
});
