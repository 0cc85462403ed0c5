/**
 * What the published API says about itself: the document's info and tag descriptions, and the order
 * of the route groups in the served list (which is the order of `paths` in /openapi.json and of the
 * MCP tools). Each plugin declares its own routes (plugin.ts); this file only lays them out.
 */

export const API_INFO = {
  title: 'fleet-gateway',
  version: '0.1.0',
  description: 'Edge gateway for robot fleets: REST API (v1). Errors always have the body {error, code}.',
  tagDescriptions: {
    'Agent API': 'Intent-oriented tools at `POST /v1/agent/{tool}`; every body carries `org_id` and `fleet_id`. The same tools over the Model Context Protocol at `/v1/mcp` (docs/mcp.md).',
    Alerts: 'Fleet conditions that need a person: open, acknowledged (`fleet:write`), resolved when the condition clears (docs/alerts.md).',
    'API keys': 'Keys for automations, managed by people through a user session (an API key cannot manage keys).',
    Audit: 'Command audit entries: who asked for which command, and its delivery history.',
    Discovery: 'The contract, the calling key\'s identity, its organization and the fleets it can use (manifests).',
    Events: 'Correlated event timelines (schedules, runs, templates, the operation, robot links).',
    Faults: 'Faults robots report in their health reports: one record per occurrence, active until the robot stops reporting it (docs/faults.md).',
    Features: 'Work areas (GeoJSON polygons) that templates and jobs refer to.',
    'Field rules': 'Zones with a constraint robots obey (speed limit, keep-out, stop-and-wait), delivered over the robot link.',
    Health: 'Liveness and readiness probes for load balancers and orchestrators (no credential, status words only).',
    'Mission runs': 'One robot\'s execution of a template: live control and recent history.',
    'Mission templates': 'Reusable work; each template is one step of the fleet\'s operation.',
    'Robot commands': 'Commands to one robot or the whole fleet, with an observable delivery state.',
    'Robot configuration': 'Remote configuration and onboard settings, read and written through the robot.',
    Robots: 'Robot records with their latest telemetry snapshot.',
    Sessions: 'People log in with email and password: a session cookie plus a CSRF token for calls other than GET.',
    Schedules: 'Registered mission runs and commands; a fire-now request is a schedule too.',
    Telemetry: 'Tickets for the live telemetry WebSocket; one robot\'s stored history: samples, downsampled series, path, MCAP export (docs/telemetry-history.md).',
    Utilization: 'How the fleet\'s robots spent a window: online, on missions, idle, charging, paused, offline; missions and distance (docs/utilization.md).',
    Webhooks: 'Alerts sent to URLs per organization, signed (HMAC-SHA256), retried, and dead-lettered when they cannot be delivered (docs/webhooks.md).',
    'Tracked objects': 'Objects in the fleet\'s area (pallets, people, obstacles): reported by robots, or placed by operators.',
  },
};

/**
 * Route groups (plugin.ts `RouteGroup.name`) in the order the served list and the document have them.
 * A group not named here follows the named ones, in plugin start order.
 */
export const ROUTE_GROUP_ORDER: readonly string[] = [
  'openapi',
  'api-docs',
  'dashboard',
  'health',
  'me',
  'sessions',
  'api-keys',
  'webhooks',
  'users',
  'fleets',
  'orgs',
  'objects',
  'robot-admin',
  'robots',
  'faults',
  'robot-details',
  'utilization',
  'telemetry-history',
  'control-robot',
  'robot-commands',
  'robot-config',
  'command-read',
  'stream-tickets',
  'events',
  'floor-plan',
  'features',
  'field-rules',
  'templates',
  'control-operation',
  'alerts',
  'mission-tools',
  'mission-runtime',
  'agent-read',
  // Last: its tools are the `POST /v1/agent/*` routes of every group above.
  'mcp',
];
