/** Simulated robots for `fleetgw sim`, demos and benchmarks. */
export { runSimFleet, SIM_AGENT_VERSION, SIM_CAPABILITIES, type SimFleet, type SimFleetOptions, type SimFleetStats, type SimRobot } from './fleet.js';
export { loadRobotsFile, parseRobots, type SimRobotCredentials } from './robots-file.js';
export { RobotModel } from './robot-model.js';
export { DEPOT, toLatLon } from './geo.js';
export { applyCommand, initialSimState, type SimCommandContext, type SimRobotState } from './commands.js';
export { simPolicy, SIM_ACTIONS, SIM_MODES } from './policy.js';
export { SimHealth, type HealthInputs } from './health.js';
