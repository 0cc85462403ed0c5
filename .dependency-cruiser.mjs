// The layer rules of src/ (docs/ARCHITECTURE.md, "Layers"), checked by `npm run lint`.
// Layers, top to bottom; a module may import its own layer's modules (within the rules below) and any
// layer under it, never one above:
//   composition roots  src/cli, src/gateway
//   transport          src/http, src/robotlink, src/telemetry/live/stream-ws.ts, src/telemetry/foxglove/foxglove-ws.ts
//   api                src/api
//   domain             src/auth, src/commands, src/events, src/idempotency, src/telemetry, src/missions,
//                      src/fleet (the fleet model built on them: field rules, objects, faults, alerts, ...),
//                      src/webhooks (alert delivery to webhooks, built on src/fleet/alerts)
//   store              src/store
//   shared leaves      src/errors, src/protocol, src/gen, src/config.ts
// src/telemetry is made of sub-modules, each imported from outside its folder only through its index.ts
// (the two WebSocket transports excepted: src/gateway wires them). Bottom to top:
//   sample     the field table and the sample's encodings (rows, snapshot, live JSON, Foxglove channels)
//   decode     frame packing, the decode pool and workers, the decoders           (on sample)
//   store      chdb / ClickHouse / cluster stores, migrations, insert queue, spool (on sample, decode)
//   live       the stream hub, its protocol and tickets                           (on sample, decode)
//   foxglove   the Foxglove endpoint's hub                                        (on sample, decode, live)
//   ingest     the ingest that composes them                                      (on all of the above)
// The robot side (src/agent, src/sim) is a world apart: it sees only the leaves it shares with the
// gateway (gen, protocol).

const ROOTS = '^src/(cli|gateway)/';
const TELEMETRY_WS = '^src/telemetry/(live/stream|foxglove/foxglove)-ws\\.ts$';
const TRANSPORT = `^src/(http|robotlink)/|${TELEMETRY_WS}`;
const API = '^src/api/';
const DOMAIN = '^src/(auth|commands|events|idempotency|missions|telemetry|fleet|webhooks)/';
const STORE = '^src/store/';
const LEAVES = '^src/(errors|gen|protocol)/|^src/config\\.ts$';
const ROBOT_SIDE = '^src/(agent|sim)/';
// The one module that loads uWebSockets.js (it picks the build for the running Node's ABI).
const UWS_FACADE = '^src/http/uws\\.ts$';
// uws-pack's exports map resolves for TypeScript only, so dependency-cruiser records the bare name.
const UWS_PACKAGES = '^uWebSockets\\.js$|(^|/)node_modules/(uWebSockets\\.js|@btc-vision/uwebsockets\\.js)/';

// Modules that own LMDB databases or key prefixes, by plugin (src/gateway/plugins/*.ts, `storage`):
// `module` is where the owner's files are, `keys` its `keys.ts` files (key shapes, prefix constants):
// only the owner's own files import them. Owners with `keys: []` key their databases by a bare id
// (snapshots, usage, floor plans, device health), or keep their key constants unexported in the files
// that write them (the registry: src/store/identity.ts, robot-names.ts, vda5050-index.ts).
const STORAGE_OWNERS = [
  { plugin: 'registry', module: ['store/identity.ts', 'store/robot-names.ts', 'store/vda5050-index.ts', 'store/registry-writes.ts'], keys: [] },
  { plugin: 'auth', module: ['auth/'], keys: ['auth/users/keys.ts'] },
  { plugin: 'events', module: ['events/'], keys: ['events/keys.ts'] },
  { plugin: 'idempotency', module: ['idempotency/'], keys: ['idempotency/keys.ts'] },
  { plugin: 'commands', module: ['commands/'], keys: ['commands/keys.ts'] },
  { plugin: 'telemetry', module: ['telemetry/'], keys: [] },
  { plugin: 'usage', module: ['fleet/robots/details/'], keys: [] },
  { plugin: 'alerts', module: ['fleet/safety/alerts/'], keys: ['fleet/safety/alerts/keys.ts'] },
  { plugin: 'faults', module: ['fleet/safety/faults/', 'fleet/robots/health/'], keys: ['fleet/safety/faults/keys.ts'] },
  { plugin: 'field-rules', module: ['fleet/safety/field-rules/'], keys: ['fleet/safety/field-rules/keys.ts'] },
  { plugin: 'objects', module: ['fleet/site/objects/'], keys: ['fleet/site/objects/keys.ts'] },
  { plugin: 'catalog', module: ['missions/catalog/'], keys: ['missions/catalog/keys.ts'] },
  { plugin: 'missions', module: ['missions/scheduling/', 'missions/runs/', 'missions/retention.ts'], keys: ['missions/scheduling/keys.ts', 'missions/runs/keys.ts'] },
  { plugin: 'floor-plans', module: ['fleet/floor-plans/'], keys: [] },
  { plugin: 'webhooks', module: ['webhooks/'], keys: ['webhooks/keys.ts'] },
  { plugin: 'vda5050', module: ['vda5050/link/'], keys: ['vda5050/link/keys.ts'] },
];
/** `src/<path>` as an anchored regex (a folder when it ends in `/`). */
const srcPaths = (paths) => paths.map((p) => `^src/${p.replace(/[.]/g, '\\.')}${p.endsWith('/') ? '' : '$'}`).join('|');

/** One forbidden edge; `comment` is what lint prints when it is crossed. */
const forbid = (name, comment, from, to) => ({ name, severity: 'error', comment, from, to });

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycle: modules must form a tree of layers. Move what both sides need to the lower module (or a small module both import).',
      from: {},
      to: { circular: true },
    },

    forbid('roots-are-top', 'Only composition roots (src/cli, src/gateway) import src/cli or src/gateway: pass what you need in from the root instead.', { pathNot: ROOTS }, { path: ROOTS }),
    forbid('gateway-not-cli', 'src/gateway is started by src/cli, not the other way round.', { path: '^src/gateway/' }, { path: '^src/cli/' }),

    forbid('transport-is-above', 'Transport (src/http, src/robotlink, src/telemetry/live/stream-ws.ts and foxglove/foxglove-ws.ts) is the outer layer: api, domain, store and leaves do not import it. Depend on an interface in your own layer and let src/gateway pass the implementation.', { path: `${API}|${DOMAIN}|${STORE}|${LEAVES}`, pathNot: TELEMETRY_WS }, { path: TRANSPORT }),
    forbid('transports-apart', 'Transports do not import each other (src/http, src/robotlink, src/telemetry/live/stream-ws.ts, foxglove/foxglove-ws.ts): src/gateway wires them. The uWS facade (src/http/uws.ts) is shared by the uWS transports.', { path: TRANSPORT }, { path: TRANSPORT, pathNot: `^src/$1/|${UWS_FACADE}` }),
    forbid('http-sees-only-routes', 'src/http serves the routes of src/api and knows no credential, record or store: it imports only src/api (the route contract) and src/errors. Authentication is injected (RequestAuth in router.ts).', { path: '^src/http/' }, { path: '^src/', pathNot: '^src/(http|api|errors)/' }),
    forbid('api-is-above-domain', 'src/api sits above the domain: domain, store and leaves do not import it.', { path: `${DOMAIN}|${STORE}|${LEAVES}` }, { path: API }),
    forbid('routes-are-leaves', 'Route modules (src/api/routes) do not import each other and nothing in src/api imports them: move a shared helper to a non-route module of src/api (e.g. fleet-scope.ts) or to the domain.', { path: API }, { path: '^src/api/routes/' }),
    forbid('domain-is-above-store', 'The store and the shared leaves sit below the domain and do not import it.', { path: `${STORE}|${LEAVES}` }, { path: DOMAIN }),
    forbid(
      'domain-leaf-modules',
      'Within the domain only src/missions and src/fleet build on other domain modules; auth, commands, events, idempotency and telemetry import no other domain folder.',
      { path: '^src/(auth|commands|events|idempotency|telemetry)/' },
      { path: DOMAIN, pathNot: '^src/$1/' },
    ),
    forbid('store-is-bottom', 'src/store is the bottom layer: it imports only itself and src/errors (owners type their databases by declaration merging, see StoreDatabases).', { path: STORE }, { path: '^src/', pathNot: '^src/(store|errors)/' }),
    forbid('leaves-are-leaves', 'src/errors, src/gen and src/config.ts import nothing else of src.', { path: '^src/(errors|gen)/|^src/config\\.ts$' }, { path: '^src/', pathNot: '^src/$1/' }),
    forbid('metrics-apart', 'src/metrics imports nothing else of src: the parts it measures declare observer interfaces and src/gateway wires them.', { path: '^src/metrics/' }, { path: '^src/', pathNot: '^src/metrics/' }),
    forbid('metrics-from-roots', 'Only the composition roots import src/metrics: pass a recorder (an observer interface of your own module) in from src/gateway.', { pathNot: `${ROOTS}|^src/metrics/` }, { path: '^src/metrics/' }),
    forbid('protocol-on-gen', 'src/protocol (the robot link contract both sides share) imports only src/gen.', { path: '^src/protocol/' }, { path: '^src/', pathNot: '^src/(protocol|gen)/' }),

    forbid(
      'telemetry-through-index',
      'Import a telemetry sub-module (src/telemetry/<sub>/) through its index.ts: what it exports there is its surface, the rest of its files are its own. Export what you need from that index.ts. (src/gateway imports the two WebSocket transports, live/stream-ws.ts and foxglove/foxglove-ws.ts, directly.)',
      { pathNot: '^src/telemetry/[^/]+/' },
      { path: '^src/telemetry/[^/]+/', pathNot: `^src/telemetry/[^/]+/index\\.ts$|${TELEMETRY_WS}` },
    ),
    forbid(
      'telemetry-sub-modules-through-index',
      'A telemetry sub-module imports another one (src/telemetry/<sub>/) only through its index.ts: export what you need from that index.ts.',
      { path: '^src/telemetry/([^/]+)/' },
      { path: '^src/telemetry/[^/]+/', pathNot: '^src/telemetry/($1/|[^/]+/index\\.ts$)' },
    ),
    forbid('telemetry-sample-bottom', 'src/telemetry/sample (the field table and the sample encodings) is the bottom of telemetry: it imports no other telemetry sub-module.', { path: '^src/telemetry/sample/' }, { path: '^src/telemetry/', pathNot: '^src/telemetry/sample/' }),
    forbid('telemetry-decode-on-sample', 'src/telemetry/decode builds on sample/ only: the decode workers load no store, hub or ingest code.', { path: '^src/telemetry/decode/' }, { path: '^src/telemetry/', pathNot: '^src/telemetry/(decode|sample)/' }),
    forbid('telemetry-store-below-ingest', 'src/telemetry/store builds on sample/ and decode/ (the addon) only; the ingest composes it with the live stream.', { path: '^src/telemetry/store/' }, { path: '^src/telemetry/', pathNot: '^src/telemetry/(store|decode|sample)/' }),
    forbid('telemetry-live-below-ingest', 'src/telemetry/live builds on sample/ and decode/ only: the ingest reaches it through the LiveSink interface.', { path: '^src/telemetry/live/' }, { path: '^src/telemetry/', pathNot: '^src/telemetry/(live|decode|sample)/' }),
    forbid('telemetry-foxglove-on-live', 'src/telemetry/foxglove builds on live/ (sessions, tickets), decode/ and sample/, not on the store or the ingest.', { path: '^src/telemetry/foxglove/' }, { path: '^src/telemetry/', pathNot: '^src/telemetry/(foxglove|live|decode|sample)/' }),
    // Modules that read other modules' records only through the owners' reads (docs/ARCHITECTURE.md,
    // "Who owns which database": the `identity`, `snapshots` and `catalog` parts): the shared Store
    // handle would let them open any database again. A module joins this list once it needs no Store.
    forbid(
      'owner-reads-only',
      'This module reads other modules\' records through their owners\' reads (IdentityReads from src/store/identity-reads.ts, LatestSnapshots from src/telemetry/snapshots, CatalogReads from src/missions/catalog/catalog-reads.ts), never through the shared Store (src/store/lmdb.ts): take the reads you need as a dependency instead.',
      { path: '^src/(auth/access|api/fleet-scope|api/list-reader|api/robot-view-cache|api/entities/robot-live|api/routes/(control-robot|robot-commands|robot-config|robots|stream-tickets|telemetry-history)|missions/scheduling/fleet-roster)\\.ts$' },
      { path: '^src/store/lmdb\\.ts$' },
    ),
    // Each module builds its own LMDB keys (docs/ARCHITECTURE.md, "Who owns which database"): the
    // files that build them are private to it; others call the module's functions.
    ...STORAGE_OWNERS.filter((o) => o.keys.length > 0).map((o) =>
      forbid(
        `storage-keys-private-${o.plugin}`,
        `${o.keys.map((k) => `src/${k}`).join(', ')} build${o.keys.length === 1 ? 's' : ''} the LMDB keys plugin \`${o.plugin}\` owns (${o.module.map((m) => `src/${m}`).join(', ')}): only its own files import ${o.keys.length === 1 ? 'it' : 'them'}. Call the owner's functions (its plugin owns the databases) instead of building its keys.`,
        { pathNot: srcPaths(o.module) },
        { path: srcPaths(o.keys) },
      ),
    ),

    forbid('fleet-above-missions', 'src/fleet (field rules, objects, faults, alerts, utilization, robot administration) builds on src/missions, never the reverse: pass what missions needs from src/fleet through an interface wired in src/gateway.', { path: '^src/missions/' }, { path: '^src/fleet/' }),

    forbid('missions-catalog-below', 'src/missions/catalog is below scheduling and runs: it imports neither.', { path: '^src/missions/catalog/' }, { path: '^src/missions/', pathNot: '^src/missions/(catalog/|clock\\.ts|fault-points\\.ts)' }),
    forbid('missions-runs-below-scheduling', 'src/missions/runs is below scheduling (the dispatcher creates runs): it imports neither scheduling nor the catalog.', { path: '^src/missions/runs/' }, { path: '^src/missions/', pathNot: '^src/missions/(runs/|clock\\.ts|fault-points\\.ts)' }),
    forbid('missions-scheduling', 'src/missions/scheduling builds on the catalog and runs, not on retention.', { path: '^src/missions/scheduling/' }, { path: '^src/missions/retention\\.ts$' }),
    forbid('missions-shared-leaves', 'src/missions/clock.ts and fault-points.ts are shared by catalog, scheduling and runs and import none of them.', { path: '^src/missions/(clock|fault-points)\\.ts$' }, { path: '^src/missions/' }),

    forbid('robot-side-apart', 'The robot side (src/agent, src/sim) imports only itself, src/gen and src/protocol (the wire contract both sides share).', { path: ROBOT_SIDE }, { path: '^src/', pathNot: '^src/(agent|sim|gen|protocol)/' }),
    forbid('sim-on-agent', 'src/agent does not import the simulator built on it.', { path: '^src/agent/' }, { path: '^src/sim/' }),
    forbid('robot-side-not-imported', 'Gateway code does not import the robot side; only the CLI (`fleetgw sim`) starts it.', { path: '^src/', pathNot: `${ROBOT_SIDE}|^src/cli/` }, { path: ROBOT_SIDE }),

    forbid('uws-through-facade', 'Import uWebSockets.js through src/http/uws.ts (types included): it loads the uWS build that fits the running Node (docs/uws-builds.md).', { path: '^src/', pathNot: UWS_FACADE }, { path: UWS_PACKAGES }),

    forbid(
      'sockets-in-transport',
      'uWebSockets.js and @grpc/grpc-js belong to transport (and to the robot side and the wire contract): the api and the domain see plain objects and the RobotLink interface.',
      { path: `${API}|${DOMAIN}|${STORE}|^src/(errors|gen)/|^src/config\\.ts$`, pathNot: TELEMETRY_WS },
      { path: '(^|/)node_modules/(uWebSockets\\.js|@grpc/grpc-js)/' },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too: a type from a layer above is still an upward edge.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'], conditionNames: ['import', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
