// The layer rules of src/ (docs/ARCHITECTURE.md, "Layers"), checked by `npm run lint`.
// Layers, top to bottom; a module may import its own layer's modules (within the rules below) and any
// layer under it, never one above:
//   composition roots  src/cli, src/gateway
//   transport          src/http, src/robotlink, src/telemetry/stream-ws.ts, src/telemetry/foxglove-ws.ts
//   api                src/api
//   domain             src/auth, src/commands, src/events, src/idempotency, src/telemetry, src/missions,
//                      src/fleet (the fleet model built on them: field rules, objects, faults, alerts, ...),
//                      src/webhooks (alert delivery to webhooks, built on src/fleet/alerts)
//   store              src/store
//   shared leaves      src/errors, src/protocol, src/gen, src/config.ts
// The robot side (src/agent, src/sim) is a world apart: it sees only the leaves it shares with the
// gateway (gen, protocol).

const ROOTS = '^src/(cli|gateway)/';
const TRANSPORT = '^src/(http|robotlink)/|^src/telemetry/(stream|foxglove)-ws\\.ts$';
const API = '^src/api/';
const DOMAIN = '^src/(auth|commands|events|idempotency|missions|telemetry|fleet|webhooks)/';
const STORE = '^src/store/';
const LEAVES = '^src/(errors|gen|protocol)/|^src/config\\.ts$';
const ROBOT_SIDE = '^src/(agent|sim)/';
// The one module that loads uWebSockets.js (it picks the build for the running Node's ABI).
const UWS_FACADE = '^src/http/uws\\.ts$';
// uws-pack's exports map resolves for TypeScript only, so dependency-cruiser records the bare name.
const UWS_PACKAGES = '^uWebSockets\\.js$|(^|/)node_modules/(uWebSockets\\.js|@btc-vision/uwebsockets\\.js)/';

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

    forbid('transport-is-above', 'Transport (src/http, src/robotlink, src/telemetry/stream-ws.ts and foxglove-ws.ts) is the outer layer: api, domain, store and leaves do not import it. Depend on an interface in your own layer and let src/gateway pass the implementation.', { path: `${API}|${DOMAIN}|${STORE}|${LEAVES}`, pathNot: '^src/telemetry/(stream|foxglove)-ws\\.ts$' }, { path: TRANSPORT }),
    forbid('transports-apart', 'Transports do not import each other (src/http, src/robotlink, src/telemetry/stream-ws.ts, foxglove-ws.ts): src/gateway wires them. The uWS facade (src/http/uws.ts) is shared by the uWS transports.', { path: '^src/(http|robotlink)/|^src/telemetry/(stream|foxglove)-ws\\.ts$' }, { path: TRANSPORT, pathNot: `^src/$1/|${UWS_FACADE}` }),
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
      { path: `${API}|${DOMAIN}|${STORE}|^src/(errors|gen)/|^src/config\\.ts$`, pathNot: '^src/telemetry/(stream|foxglove)-ws\\.ts$' },
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
