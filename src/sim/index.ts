/** Simulated robots for `fleetgw sim`, demos and benchmarks. */
export { runSimFleet, SIM_AGENT_VERSION, type SimFleet, type SimFleetOptions, type SimFleetStats, type SimRobot } from './fleet.js';
export { loadRobotsFile, parseRobots, type SimRobotCredentials } from './robots-file.js';
export { RobotModel } from './robot-model.js';
export { DEPOT, toLatLon } from './geo.js';
export { applyCommand, initialSimState, SIM_CAPABILITIES, type SimCommandContext, type SimRobotState } from './commands.js';
export { simPolicy, SIM_ACTIONS, SIM_MODES } from './policy.js';
export { SimHealth, type HealthInputs } from './health.js';
