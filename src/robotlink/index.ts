/** The robot link over gRPC (see server.ts); the gateway uses the RobotLink interface from types.ts. */
export { startRobotLinkServer, type RobotLinkServer, type RobotLinkServerOptions } from './server.js';
export type { LinkConflictCleared, LinkConflictReport, LinkConflictView, RobotLink, RobotLinkListener } from './types.js';
export { CONNECT_PATH, ROBOT_ID_METADATA } from './service.js';
