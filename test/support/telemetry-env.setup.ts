/**
 * In-process tests run the telemetry core with the decoder `fleetgw serve` would pick from the runner's
 * environment: CI's JS-decoder pass sets FLEETGW_TELEMETRY_DECODER=js for whole directories, and the
 * modules themselves no longer read the environment (src/config.ts does, for the CLI).
 */
import { parseConfig } from '../../src/config.js';
import { setDecoderSetting } from '../../src/telemetry/decode/native.js';

setDecoderSetting(parseConfig({ FLEETGW_TELEMETRY_DECODER: process.env.FLEETGW_TELEMETRY_DECODER }).telemetryDecoder);
