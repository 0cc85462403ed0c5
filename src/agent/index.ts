/** The reusable robot agent (see agent.ts). */
export { AGENT_VERSION, RobotAgent, type AgentStats, type CommandHandler, type CommandResult, type RobotAgentOptions } from './agent.js';
export { encodeSample, type SampleInput } from './sample-encoder.js';
