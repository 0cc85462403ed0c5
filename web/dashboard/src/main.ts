/**
 * The browser dashboard (docs/dashboard.md): a person logs in with a user session (never an API key
 * in the page), then watches and commands a fleet. Served by the gateway at / with a strict CSP.
 */
import 'leaflet/dist/leaflet.css';
import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import { Api, ApiError } from './api.js';
import { FleetDashboard } from './app.js';
import { h } from './dom.js';
import { login } from './login.js';
import type { SessionInfo } from './types.js';

const root = document.getElementById('app') as HTMLElement;
const api = new Api();
let current: FleetDashboard | null = null;

async function session(): Promise<SessionInfo | null> {
  try {
    return await api.get<SessionInfo>('/v1/sessions/current');
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return null;
    throw err;
  }
}

async function logout(): Promise<void> {
  current?.stop();
  current = null;
  try {
    await api.del('/v1/sessions/current');
  } catch {
    // Already ended (expired, revoked): the page forgets it either way.
  }
  api.csrfToken = '';
  start();
}

/** The gateway ended the session (revoked, expired, logged out in another tab): back to the login form. */
function sessionEnded(): void {
  current?.stop();
  current = null;
  api.csrfToken = '';
  start();
}

async function run(): Promise<void> {
  const info = (await session()) ?? (await login(root, api));
  api.csrfToken = info.csrfToken;
  current = new FleetDashboard(root, api, info, () => void logout(), sessionEnded);
  await current.start();
}

/** Shows the dashboard, or the login form first; a failure (gateway unreachable) is shown, with a retry. */
function start(): void {
  run().catch((err: unknown) => {
    const retry = h('button', { type: 'button' }, 'Retry');
    retry.addEventListener('click', start);
    root.replaceChildren(h('p', { class: 'bad' }, `The dashboard could not start: ${(err as Error).message}`), retry);
  });
}

start();
