/**
 * TEST-ONLY fault injection at named points of the mission write paths, so the real-process tests
 * can crash or fail the gateway at an exact instant (test/e2e/missions-integrity.test.ts).
 *
 * `FLEETGW_TEST_FAULT=<point>:<kind>` in the environment of `fleetgw serve`, checked and armed once at start:
 *   kind `kill`  - the process sends itself SIGKILL at that point (a crash, nothing flushed or closed);
 *   kind `throw` - the point throws an Error (an unexpected failure in the request or fire handler).
 * Points:
 *   `mission-tool.after-commit`   a mission tool's request (submit-job, deploy-mission, schedule-mission,
 *                                 schedule-command) or a template create right after its write
 *                                 committed, before it answers
 *   `command-fire.submitted`      a schedule-command fire after its commands were submitted and
 *                                 committed, before the fire records their ids
 *   `start.<plugin>`              `fleetgw serve` about to start the named plugin (src/gateway/plugins):
 *                                 the composer must stop every plugin started before it
 * Unset (production): every point is a no-op costing one comparison. Never set it on a real gateway.
 */

// Set once at start by `fleetgw serve` from FLEETGW_TEST_FAULT (parsed in src/config.ts).
let POINT = '';
let KIND = '';

/** Arms the configured test fault (`fleetgw serve` passes FLEETGW_TEST_FAULT, parsed); undefined disarms. */
export function setTestFault(spec: { point: string; kind: string } | undefined): void {
  POINT = spec?.point ?? '';
  KIND = spec?.kind ?? '';
}

export type FaultPoint = 'mission-tool.after-commit' | 'command-fire.submitted' | `start.${string}`;

/** Injects the configured test fault if `point` is the configured one (see the module comment). */
export function faultPoint(point: FaultPoint): void {
  if (POINT !== point) return;
  if (KIND === 'kill') process.kill(process.pid, 'SIGKILL');
  if (KIND === 'throw') throw new Error(`injected test fault at ${point}`);
}
