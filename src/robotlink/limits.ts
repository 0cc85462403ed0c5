/**
 * Largest message a robot may send on the robot link. Telemetry batches are a few kB to a few hundred
 * kB; the bound keeps one robot from making the gateway buffer arbitrarily large messages. Enforced by
 * grpc-js (server option) and by the telemetry fast path's reader alike.
 */
export const MAX_ROBOT_MESSAGE_BYTES = 4 * 1024 * 1024;
