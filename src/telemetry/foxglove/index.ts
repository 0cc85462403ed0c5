/**
 * The Foxglove WebSocket endpoint's state: advertised channels, subscriptions and the fan-out of the
 * Foxglove frames the decoders write. Its WebSocket route (foxglove-ws.ts) is transport, a layer above,
 * imported by src/gateway directly.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { FoxgloveHub } from './foxglove-hub.js';
