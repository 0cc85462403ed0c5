/**
 * The logged-in dashboard for one fleet: map, robot list, robot page, alerts, schedules and runs,
 * commands. Owns the live stream and every timer, and ends them all at logout.
 */
import { AdminPanel } from './admin.js';
import type { Api } from './api.js';
import { AlertsPanel } from './alerts.js';
import { CommandLog } from './commands.js';
import { h, replace } from './dom.js';
import { FleetBar } from './fleet-bar.js';
import { FloorPlanPanel } from './floor-plan-panel.js';
import { ReplayBar } from './replay.js';
import { MapView } from './map-view.js';
import { MissionsPanel } from './missions.js';
import { RobotList } from './robot-list.js';
import { RobotPage } from './robot-page.js';
import { robotState } from './robot-state.js';
import { LiveStream } from './stream.js';
import type { Fleet, LiveSample, MapContext, Page, RobotCommandOutcome, RobotView, SessionInfo } from './types.js';

const MAP_FLUSH_MS = 250;
const LIST_FLUSH_MS = 500;
const ROBOTS_REFRESH_MS = 10_000;
const CONTEXT_REFRESH_MS = 15_000;

/**
 * The stream's per-robot rate (server-side decimation, docs/telemetry-stream.md): the map redraws
 * 4 times a second, so 5 samples a second per robot show every redraw; a large fleet gets 2, which
 * keeps the page's work per second near flat per robot (bench/notes/dashboard.md).
 */
function maxHzFor(robots: number): number {
  return robots > 200 ? 2 : 5;
}

export class FleetDashboard {
  private readonly robots = new Map<string, RobotView>();
  private readonly moved = new Set<string>();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private stream: LiveStream | null = null;
  private map: MapView | null = null;
  private fleetId: string | null = null;
  private missions: MissionsPanel | null = null;
  private commands: CommandLog | null = null;
  private robotPage: RobotPage | null = null;
  private robotList: RobotList | null = null;
  private fleetBar: FleetBar | null = null;
  private floorPlan: FloorPlanPanel | null = null;
  private replay: ReplayBar | null = null;
  /** Bumped by stop(): a fleet view still loading when it changes gives up instead of starting timers. */
  private generation = 0;
  private readonly streamState = h('span', { class: 'stream-state', 'data-state': 'connecting' }, 'connecting');

  constructor(
    private readonly root: HTMLElement,
    private readonly api: Api,
    private readonly info: SessionInfo,
    private readonly onLogout: () => void,
    private readonly onSessionEnded: () => void,
  ) {}

  /** Reads the fleets and shows the first one (or the one named in the address's fragment). */
  async start(): Promise<void> {
    const orgId = this.info.session.orgId;
    const fleets = (await this.api.get<Page<Fleet>>(`/v1/orgs/${orgId}/fleets`)).items;
    const wanted = new URLSearchParams(location.hash.slice(1)).get('fleet');
    const fleet = fleets.find((f) => f.fleetId === wanted) ?? fleets[0];
    if (fleet === undefined) {
      replace(this.root, this.header(fleets, null), h('p', { class: 'muted' }, 'This organization has no fleet.'));
      return;
    }
    await this.showFleet(fleets, fleet);
  }

  /** Ends the stream and every timer (logout, switching fleets). */
  stop(): void {
    this.generation++;
    this.stream?.stop();
    this.stream = null;
    for (const t of this.timers.splice(0)) clearInterval(t);
    this.missions?.stop();
    this.commands?.stop();
    this.floorPlan?.stop();
    this.replay?.stop();
    this.robotPage?.show(null);
    this.map?.destroy();
    this.map = null;
  }

  private name = (id: string): string => this.robots.get(id)?.name ?? id.slice(0, 8);

  private async showFleet(fleets: Fleet[], fleet: Fleet): Promise<void> {
    this.stop();
    this.robots.clear();
    this.fleetId = fleet.fleetId;
    const ids = { orgId: this.info.session.orgId, fleetId: fleet.fleetId };
    const base = `/v1/orgs/${ids.orgId}/fleets/${ids.fleetId}`;
    const commands = new CommandLog(this.api, this.name);
    this.commands = commands;
    const alerts = new AlertsPanel(this.api, base, this.name);
    const page = new RobotPage(this.api, this.robots, {
      stop: (id) => void this.command(commands, ids, 'stop', id),
      start: (id) => void this.command(commands, ids, 'start', id),
      close: () => page.show(null),
      trail: (coords) => this.map?.setTrail(coords),
    });
    page.el.hidden = true;
    this.robotPage = page;
    // The robot page opens at the top of the side column, scrolled into view wherever the page was.
    const open = (id: string): void => {
      page.show(id);
      page.el.scrollIntoView({ block: 'start' });
      page.focus();
    };
    const list = new RobotList(this.robots, open, (action, id) => void this.command(commands, ids, action, id));
    this.robotList = list;
    const bar = new FleetBar(this.api, ids, this.robots, commands);
    this.fleetBar = bar;
    alerts.onCount = (n) => bar.setOpenAlerts(n);
    this.missions = new MissionsPanel(this.api, ids, this.name, commands);
    const admin = new AdminPanel(this.api, this.info, fleet.fleetId);
    const mapEl = h('div', { class: 'map', id: 'map', role: 'region', 'aria-label': 'Fleet map' });
    const replay = new ReplayBar(this.api, base, this.robots, {
      time: (ms) => {
        page.setTime(ms);
        // Back to live: every marker is drawn from the live state again at the next flush.
        if (ms === null) {
          for (const id of this.robots.keys()) this.moved.add(id);
          alerts.setReplay(null);
          this.map?.setAlerts(new Map());
        }
      },
      alerts: (open) => {
        const t = replay.time;
        if (t === null) return;
        alerts.setReplay(t, open);
        const byRobot = new Map<string, string[]>();
        for (const a of open) if (a.robotId !== null) (byRobot.get(a.robotId) ?? byRobot.set(a.robotId, []).get(a.robotId)!).push(a.kind);
        this.map?.setAlerts(byRobot);
      },
      frames: (frames) => {
        for (const f of frames) this.map?.setRobot(f.robotId, this.name(f.robotId), f.lat, f.lon, f.headingDeg, f.state, f.tsMs);
        this.map?.declutter();
      },
    });
    this.replay = replay;
    const side = h('aside', { class: 'side', 'aria-label': 'Fleet details' }, page.el, alerts.el, list.el, this.missions.el, admin.el);
    replace(
      this.root,
      this.header(fleets, fleet),
      bar.el,
      h(
        'main',
        { class: 'layout' },
        h('div', { class: 'map-column' }, h('div', { class: 'map-wrap' }, mapEl), replay.el, commands.el),
        side,
      ),
    );
    this.map = new MapView(mapEl, open);
    void admin.load();
    const plan = new FloorPlanPanel(this.api, base, this.map, this.info.session.user.role === 'admin');
    this.floorPlan = plan;
    side.append(plan.el);
    void plan.load();

    const generation = this.generation;
    await this.loadRobots();
    // Logged out or switched fleets meanwhile: that view owns the page now.
    if (generation !== this.generation) return;
    list.changed();
    list.flush();
    this.flushMap();
    void this.loadContext(ids);
    void alerts.load();
    this.missions.start();

    this.stream = new LiveStream(this.api, ids.orgId, ids.fleetId, {
      sample: (s) => this.sample(s),
      alert: (_change, a) => alerts.update(a),
      dropped: () => void alerts.load(),
      ended: () => this.onSessionEnded(),
      status: (state, detail) => {
        this.streamState.dataset.state = state;
        this.streamState.textContent = state === 'live' ? 'live' : detail ? `${state} (${detail})` : state;
      },
    }, () => maxHzFor(this.robots.size));
    this.stream.start();
    this.timers.push(
      setInterval(() => this.flushMap(), MAP_FLUSH_MS),
      setInterval(() => {
        list.flush();
        bar.render();
        page.live();
        replay.followClock();
      }, LIST_FLUSH_MS),
      setInterval(() => void this.loadRobots().then(() => list.changed()), ROBOTS_REFRESH_MS),
      setInterval(() => void this.loadContext(ids), CONTEXT_REFRESH_MS),
    );
  }

  private header(fleets: Fleet[], fleet: Fleet | null): HTMLElement {
    const select = h('select', { 'aria-label': 'Fleet' }, ...fleets.map((f) => h('option', { value: f.fleetId, selected: f.fleetId === fleet?.fleetId }, f.name)));
    select.addEventListener('change', () => {
      const next = fleets.find((f) => f.fleetId === select.value);
      if (next === undefined) return;
      location.hash = `fleet=${next.fleetId}`;
      void this.showFleet(fleets, next);
    });
    const logout = h('button', { type: 'button', 'data-action': 'logout' }, 'Log out');
    logout.addEventListener('click', () => this.onLogout());
    return h(
      'header',
      { class: 'top' },
      h('h1', {}, 'fleet-gateway'),
      select,
      h('span', { class: 'muted' }, 'stream: '),
      this.streamState,
      h('span', { class: 'spacer' }),
      h('span', { class: 'user' }, `${this.info.session.user.email} (${this.info.session.user.role})`),
      logout,
    );
  }

  private async loadRobots(): Promise<void> {
    const fleetId = this.fleetId;
    if (fleetId === null) return;
    try {
      const list = await this.api.get<RobotView[]>('/v1/robots', { fleet_id: fleetId });
      for (const r of list) {
        const known = this.robots.get(r.id);
        // A live sample newer than the REST snapshot wins.
        if (known === undefined || (r.lastSeenMs ?? 0) >= (known.lastSeenMs ?? 0)) this.robots.set(r.id, r);
        else known.online = r.online;
        this.moved.add(r.id);
      }
    } catch {
      // Kept as shown; the next refresh tries again.
    }
  }

  private async loadContext(ids: { orgId: string; fleetId: string }): Promise<void> {
    try {
      const ctx = await this.api.post<MapContext>('/v1/agent/get-map-context', { org_id: ids.orgId, fleet_id: ids.fleetId, include: ['features', 'field_rules', 'objects'] });
      this.map?.setContext(ctx);
      this.map?.fitOnce();
    } catch {
      // A key without features:read, say: the map still shows the robots.
    }
  }

  private sample(s: LiveSample): void {
    const r = this.robots.get(s.robot_id);
    if (r === undefined) return;
    r.online = true;
    r.lastSeenMs = Date.now();
    r.latitude = s.latitude;
    r.longitude = s.longitude;
    r.headingDeg = s.pose.heading_deg;
    r.speedMps = s.velocity.linear_mps;
    r.batteryPct = s.battery.percent;
    r.charging = s.battery.charging;
    r.mode = s.mode;
    r.estop = s.estop;
    r.missionState = s.mission?.mission_state ?? null;
    r.missionProgressPct = s.mission?.mission_progress_pct ?? null;
    r.healthLevel = s.health.level;
    this.moved.add(s.robot_id);
    // The list interval redraws it.
    this.robotList?.changed();
  }

  private flushMap(): void {
    // While replaying, the map shows the history; live samples keep the list and the fleet bar current.
    if (this.map === null || this.replay?.time != null) return;
    for (const id of this.moved) {
      const r = this.robots.get(id);
      if (r !== undefined) this.map.setRobot(id, r.name, r.latitude, r.longitude, r.headingDeg, robotState(r));
    }
    if (this.moved.size > 0) {
      this.map.fitOnce();
      this.map.declutter();
    }
    this.moved.clear();
  }

  private async command(log: CommandLog, ids: { orgId: string; fleetId: string }, action: 'stop' | 'start', robotId: string): Promise<void> {
    try {
      const r = await this.api.post<{ outcomes: RobotCommandOutcome[] }>('/v1/agent/control-robot', {
        org_id: ids.orgId,
        fleet_id: ids.fleetId,
        action,
        robot_id: robotId,
        ...(action === 'stop' ? { reason: 'stopped from the dashboard' } : {}),
      });
      log.track(action, r.outcomes);
    } catch (err) {
      log.failed(action, robotId, (err as Error).message);
    }
  }
}
