/** The robot link over gRPC (see server.ts); the gateway uses the RobotLink interface from types.ts. */
export { startRobotLinkServer, type RobotLinkServer, type RobotLinkServerOptions } from './server.js';
export type { LinkConflictCleared, LinkConflictReport, LinkConflictView, RobotLink, RobotLinkListener } from '../protocol/robot-link.js';
export { CONNECT_PATH, ROBOT_ID_METADATA } from '../protocol/service.js';
