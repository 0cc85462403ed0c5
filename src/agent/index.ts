/** The reusable robot agent (see agent.ts). */
export { AGENT_VERSION, RobotAgent, type AgentStats, type FieldRulesOutcome, type RobotAgentOptions } from './agent.js';
export type { CommandHandler, CommandResult } from './command-processor.js';
export { encodeSample, type SampleInput } from './sample-encoder.js';
export { HealthReporter, HEALTH_REPORT_PERIOD_MS, type DeviceHealthInput, type HealthFaultInput, type HealthState } from './health-reporter.js';
