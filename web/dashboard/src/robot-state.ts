/** One word for a robot's state, shared by the list, the fleet bar, the map and the legend. */
import type { RobotView } from './types.js';

export type RobotState = 'offline' | 'estop' | 'faulted' | 'paused' | 'moving' | 'idle';

/** The robot's state, most urgent first: offline hides the rest, an e-stop outranks a fault. */
export function robotState(r: Pick<RobotView, 'online' | 'estop' | 'mode' | 'healthLevel' | 'speedMps'>): RobotState {
  if (!r.online) return 'offline';
  if (r.estop === true) return 'estop';
  if (r.healthLevel === 'error') return 'faulted';
  if (r.mode === 'paused') return 'paused';
  return (r.speedMps ?? 0) > 0.05 ? 'moving' : 'idle';
}

export const STATE_LABEL: Readonly<Record<RobotState, string>> = {
  offline: 'offline',
  estop: 'E-STOP',
  faulted: 'faulted',
  paused: 'paused',
  moving: 'moving',
  idle: 'idle',
};

/** Fill colours on the map and in the legend (contrast against the map's pale ground). */
export const STATE_COLOUR: Readonly<Record<RobotState, string>> = {
  offline: '#9aa5b1',
  estop: '#b51d1d',
  faulted: '#d0021b',
  paused: '#e07b00',
  moving: '#1a8f5a',
  idle: '#1d5fc4',
};
