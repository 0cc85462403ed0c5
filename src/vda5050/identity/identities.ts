/**
 * {@link Vda5050Identities} over the robot registry's records. A binding written by any process counts
 * at once: master control looks up the robot of every inbound message, so {@link robotOf} keeps the
 * answers (hits and misses) only while the meta counter every binding change bumps is unchanged, and
 * reads that one key per lookup instead of an index range and a robot record. Change notices come from polling one meta counter the registry bumps with every binding
 * change (src/store/vda5050-index.ts): `fleetgw admin add-robot --vda5050` runs in another process
 * and cannot call into the gateway, and a REST change goes the same way, so there is one path.
 */
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import type { RobotRecord } from '../../store/records.js';
import { robotOfVda5050, vda5050BindingsVersion, vda5050Robots } from '../../store/vda5050-index.js';
import type { Vda5050Binding, Vda5050Identities, Vda5050Robot } from '../contracts.js';
import { cachedRobot } from '../../store/identity-reads.js';

/** How often the running gateway looks for binding changes (one LMDB read each time). */
export const VDA5050_IDENTITY_POLL_MS = 500;

/**
 * Most identities {@link RegistryVda5050Identities.robotOf} remembers; when full it forgets them all
 * (clients publishing under ever new unbound identities cannot grow it).
 */
export const IDENTITY_CACHE_MAX = 8192;

function view(r: Readonly<RobotRecord>): Vda5050Robot | undefined {
  return r.vda5050 === undefined ? undefined : { robotId: r.robotId, fleetId: r.fleetId, binding: r.vda5050 };
}

const signature = (r: Vda5050Robot): string => `${r.fleetId}\n${r.binding.manufacturer}\n${r.binding.serialNumber}`;

/** The registry-backed identities; `start` begins watching for changes, `stop` ends it. */
export class RegistryVda5050Identities implements Vda5050Identities {
  private readonly listeners = new Set<(robotId: string) => void>();
  /** The bindings as last announced, by robot id. */
  private known = new Map<string, string>();
  private version = -1;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly log?: Pick<Logger, 'error'>,
  ) {}

  /** Answers of {@link robotOf} (null: no robot) under binding version {@link cachedVersion}. */
  private readonly cache = new Map<string, Vda5050Robot | null>();
  private cachedVersion = -1;

  robotOf(manufacturer: string, serialNumber: string): Vda5050Robot | undefined {
    const version = vda5050BindingsVersion(this.store);
    if (version !== this.cachedVersion) {
      this.cache.clear();
      this.cachedVersion = version;
    }
    // Neither part contains '/' (the binding rules): the pair is one key.
    const key = `${manufacturer}/${serialNumber}`;
    let robot = this.cache.get(key);
    if (robot === undefined) {
      const r = robotOfVda5050(this.store, manufacturer, serialNumber);
      robot = (r === undefined ? undefined : view(r)) ?? null;
      if (this.cache.size >= IDENTITY_CACHE_MAX) this.cache.clear();
      this.cache.set(key, robot);
    }
    return robot ?? undefined;
  }

  bindingOf(robotId: string): Vda5050Binding | undefined {
    return cachedRobot(this.store, robotId)?.vda5050;
  }

  all(): readonly Vda5050Robot[] {
    const out: Vda5050Robot[] = [];
    for (const r of vda5050Robots(this.store)) {
      const v = view(r);
      if (v !== undefined) out.push(v);
    }
    return out;
  }

  onChange(listener: (robotId: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Takes the current bindings as known and checks for changes every `pollMs`. */
  start(pollMs = VDA5050_IDENTITY_POLL_MS): void {
    this.check();
    this.timer ??= setInterval(() => this.check(), pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  /** Announces every robot whose binding (or fleet) differs from the last check; cheap when nothing changed. */
  check(): void {
    const version = vda5050BindingsVersion(this.store);
    if (version === this.version) return;
    this.version = version;
    const now = new Map<string, string>();
    for (const r of this.all()) now.set(r.robotId, signature(r));
    const changed: string[] = [];
    for (const [id, sig] of now) if (this.known.get(id) !== sig) changed.push(id);
    for (const id of this.known.keys()) if (!now.has(id)) changed.push(id);
    this.known = now;
    for (const id of changed) {
      for (const l of [...this.listeners]) {
        try {
          l(id);
        } catch (err: unknown) {
          // One listener's bug must not keep the others (the broker, master control) from hearing.
          this.log?.error({ err, robotId: id }, 'VDA 5050 identity listener failed');
        }
      }
    }
  }
}
