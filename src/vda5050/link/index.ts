/** VDA 5050 master control: the robot link over MQTT (docs/vda5050.md). */
export { Vda5050Link, type Vda5050LinkOptions, type Vda5050LinkStats } from './link.js';
export { MapFrame, DEFAULT_MAP_ORIGIN, type MapOrigin } from './map-frame.js';
