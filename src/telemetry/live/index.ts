/**
 * The live stream: the hub that fans decoded samples out to dashboard sockets (stream-hub.ts, its
 * topics and protocol), the single-use tickets that open it, and the sweep that ends what a revoked
 * key obtained. Its WebSocket route (stream-ws.ts) is transport, a layer above, imported by src/gateway
 * directly.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { startKeyRevocationSweep } from './key-revocation-sweep.js';
export type { FoxgloveSink, LiveSink } from './live-sink.js';
export { StreamHub, createStreamHub } from './stream-hub.js';
export type { StreamPeer, StreamSession, StreamHubOptions } from './stream-hub.js';
export { STREAM_PATH, closeReason, CLOSE } from './stream-protocol.js';
export { TicketCapacityError, TicketIssuer, MAX_TICKET_TTL_MS } from './ticket-issuer.js';
export type { TicketBound, TicketScope, TicketIssuerOptions } from './ticket-issuer.js';
