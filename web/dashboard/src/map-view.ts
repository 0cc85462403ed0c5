/**
 * The fleet map, drawn without tiles (a depot reaches no tile server): features, field rules and
 * tracked objects as vector shapes from POST /v1/agent/get-map-context, robots as markers with a
 * heading line moved by the live stream. Leaflet's SVG renderer: no WebGL, so it also runs in a
 * headless browser. Coordinates are the gateway's latitude/longitude (the simulator's depot frame is
 * converted by the robots themselves), so shapes and robots line up.
 */
import * as L from 'leaflet';
import { h } from './dom.js';
import type { Corners } from './floor-plan-geo.js';
import { FloorPlanLayer } from './floor-plan-layer.js';
import { STATE_COLOUR, STATE_LABEL, type RobotState } from './robot-state.js';
import type { MapContext } from './types.js';

/** Length of the heading line, metres. */
const HEADING_M = 4;
const METRES_PER_DEG_LAT = 111_320;

const RULE_COLOURS: Record<string, string> = { keep_out: '#d33', speed_limit: '#e80', stop_and_wait: '#83c' };

interface RobotMarker {
  dot: L.CircleMarker;
  heading: L.Polyline;
  name: string;
  labelShown: boolean;
  online: boolean;
}

/** Robots drawn as SVG elements (each inspectable, with its data attributes); more go on a canvas. */
export const SVG_ROBOTS = 200;

/** Approximate label box (11 px system font) for the collision check, in pixels. */
const LABEL_CHAR_PX = 6.5;
const LABEL_HEIGHT_PX = 16;
/** Object classes drawn with their own colour; others share the last one. */
const OBJECT_COLOURS: Record<string, string> = { pallet: '#8a5a2b', person: '#c2185b', obstacle: '#455a64', other: '#7b8794' };

export class MapView {
  readonly el: HTMLElement;
  private readonly map: L.Map;
  private readonly robots = new Map<string, RobotMarker>();
  private readonly shapes = L.layerGroup();
  private readonly objects = L.layerGroup();
  private readonly robotLayer = L.layerGroup();
  /**
   * Past {@link SVG_ROBOTS} robots the markers go on one canvas: a thousand SVG elements moved four
   * times a second cost the page more than redrawing one canvas (bench/notes/dashboard.md).
   */
  private readonly canvas = L.canvas({ padding: 0.2 });
  private trail: L.Polyline | null = null;
  private floorPlan: FloorPlanLayer | null = null;
  private fitted = false;
  /** Time travel: the kinds of the alerts open at the cursor, by robot (empty: live, or none open). */
  private flags = new Map<string, string[]>();
  /** While set (an admin placing the floor plan), a click on the map gives its latitude/longitude here. */
  pick: ((lat: number, lon: number) => void) | null = null;

  constructor(
    el: HTMLElement,
    private readonly onSelect: (robotId: string) => void,
  ) {
    this.el = el;
    this.map = L.map(el, { attributionControl: false, preferCanvas: false, zoomSnap: 0.25 });
    this.map.setView([0, 0], 2);
    L.control.scale({ imperial: false }).addTo(this.map);
    this.shapes.addTo(this.map);
    this.objects.addTo(this.map);
    this.robotLayer.addTo(this.map);
    L.control.layers(undefined, { 'Features and field rules': this.shapes, 'Tracked objects': this.objects, Robots: this.robotLayer }, { collapsed: true }).addTo(this.map);
    this.legend().addTo(this.map);
    this.map.on('click', (e: L.LeafletMouseEvent) => this.pick?.(e.latlng.lat, e.latlng.lng));
    this.map.on('zoomend moveend', () => this.declutter());
  }

  /** One legend for everything drawn: robot states, zones by rule type, features, objects by class. */
  private legend(): L.Control {
    const control = new L.Control({ position: 'bottomright' });
    control.onAdd = () => {
      const item = (cls: string, label: string) => h('li', {}, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), label);
      const details = h(
        'details',
        { class: 'map-legend' },
        h('summary', {}, 'Legend'),
        h('ul', {}, ...(Object.keys(STATE_LABEL) as RobotState[]).map((s) => item(`robot state-${s}`, `robot ${STATE_LABEL[s]}`)), item('heading', 'heading (line from the robot)'), item('robot alert-flag', 'robot with an alert open (time travel)')),
        h('ul', {}, item('zone rule-keep_out', 'keep-out zone'), item('zone rule-speed_limit', 'speed-limit zone'), item('zone rule-stop_and_wait', 'stop-and-wait zone'), item('zone disabled', 'rule disabled (dashed)'), item('feature', 'feature (work area)')),
        h('ul', {}, ...Object.keys(OBJECT_COLOURS).map((c) => item(`object class-${c}`, `object: ${c}`)), item('trail', 'position trail')),
      );
      L.DomEvent.disableClickPropagation(details);
      L.DomEvent.disableScrollPropagation(details);
      return details;
    };
    return control;
  }

  /**
   * Shows robot labels that do not collide: greedily in name order, each label kept when its box
   * overlaps no label kept before it (a grid of 64 px cells keeps the check near constant per robot).
   */
  declutter(): void {
    const cell = 64;
    const grid = new Map<string, DOMRect[]>();
    const size = this.map.getSize();
    const sorted = [...this.robots.values()].sort((a, b) => a.name.localeCompare(b.name));
    for (const m of sorted) {
      const p = this.map.latLngToContainerPoint(m.dot.getLatLng());
      const box = new DOMRect(p.x + 8, p.y - LABEL_HEIGHT_PX / 2, m.name.length * LABEL_CHAR_PX + 8, LABEL_HEIGHT_PX);
      const inView = p.x >= 0 && p.y >= 0 && p.x <= size.x && p.y <= size.y;
      let free = inView;
      const cells: string[] = [];
      for (let cx = Math.floor(box.left / cell); cx <= Math.floor(box.right / cell); cx++) {
        for (let cy = Math.floor(box.top / cell); cy <= Math.floor(box.bottom / cell); cy++) cells.push(`${cx},${cy}`);
      }
      if (free) {
        for (const c of cells) {
          for (const o of grid.get(c) ?? []) {
            if (box.left < o.right && box.right > o.left && box.top < o.bottom && box.bottom > o.top) free = false;
          }
        }
      }
      if (free) for (const c of cells) (grid.get(c) ?? grid.set(c, []).get(c)!).push(box);
      if (free !== m.labelShown) {
        m.labelShown = free;
        if (free) m.dot.openTooltip();
        else m.dot.closeTooltip();
      }
    }
  }

  /** Draws the fleet's features, field rules and objects (replacing the previous drawing). */
  setContext(ctx: MapContext): void {
    this.shapes.clearLayers();
    this.objects.clearLayers();
    for (const f of ctx.features ?? []) {
      L.geoJSON(f.geometry, { style: { color: '#1d5fc4', weight: 1, fillOpacity: 0.08, className: 'map-feature' } })
        .bindTooltip(`${f.name}${f.locked ? ' (locked)' : ''}`)
        .addTo(this.shapes);
    }
    for (const r of ctx.field_rules ?? []) {
      const colour = RULE_COLOURS[r.type] ?? '#555';
      L.geoJSON(r.geometry, { style: { color: colour, weight: 2, dashArray: r.enabled ? undefined : '4 4', fillOpacity: r.enabled ? 0.15 : 0.03, className: 'map-field-rule' } })
        .bindTooltip(`${r.name}: ${r.type.replaceAll('_', ' ')}${r.enabled ? '' : ' (disabled)'}`)
        .addTo(this.shapes);
    }
    for (const o of ctx.objects ?? []) {
      const colour = OBJECT_COLOURS[o.object_class] ?? OBJECT_COLOURS.other!;
      if (o.geometry !== null) L.geoJSON(o.geometry, { style: { color: colour, weight: 1, fillOpacity: 0.2 } }).addTo(this.objects);
      L.circleMarker([o.latitude, o.longitude], { radius: 4, color: '#222', fillColor: colour, fillOpacity: 1, weight: 1, className: `map-object class-${o.object_class}` })
        .bindTooltip(o.object_class)
        .addTo(this.objects);
    }
  }

  /** Places or moves a robot's marker, coloured by its state. */
  setRobot(id: string, name: string, lat: number | null, lon: number | null, headingDeg: number | null, state: RobotState, replayTsMs: number | null = null): void {
    const online = state !== 'offline';
    if (lat === null || lon === null || !Number.isFinite(lat) || !Number.isFinite(lon)) return;
    let m = this.robots.get(id);
    if (m === undefined) {
      const renderer = this.robots.size >= SVG_ROBOTS ? { renderer: this.canvas } : {};
      const dot = L.circleMarker([lat, lon], { radius: 7, weight: 2, fillOpacity: 0.95, className: 'robot-marker', ...renderer }).bindTooltip(name, { permanent: true, direction: 'right', offset: [8, 0], className: 'robot-label' });
      dot.on('click', () => this.onSelect(id));
      const heading = L.polyline([[lat, lon], [lat, lon]], { weight: 3, className: 'robot-heading', ...renderer });
      m = { dot, heading, name, labelShown: true, online };
      this.robots.set(id, m);
      heading.addTo(this.robotLayer);
      dot.addTo(this.robotLayer);
      const path = dot.getElement();
      if (path instanceof SVGElement) path.dataset.robotId = id;
    }
    m.dot.setLatLng([lat, lon]);
    m.online = online;
    m.dot.setStyle({ fillColor: STATE_COLOUR[state] });
    this.outline(id, m);
    const h = ((headingDeg ?? 0) * Math.PI) / 180;
    const dLat = (Math.cos(h) * HEADING_M) / METRES_PER_DEG_LAT;
    const dLon = (Math.sin(h) * HEADING_M) / (METRES_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180));
    m.heading.setLatLngs([[lat, lon], [lat + dLat, lon + dLon]]);
    m.heading.setStyle({ color: online ? '#124' : '#999' });
    // Where the marker is drawn, for people inspecting the page and for the browser test.
    const path = m.dot.getElement();
    if (path instanceof SVGElement) {
      path.dataset.lat = String(lat);
      path.dataset.lon = String(lon);
      path.dataset.state = state;
      // The sample's time when the map replays history (absent: live).
      if (replayTsMs === null) delete path.dataset.replayTs;
      else path.dataset.replayTs = String(replayTsMs);
    }
  }

  /**
   * Flags the robots with an alert open at the replay cursor (a thick red outline, and the alert
   * kinds in `data-alerts` on SVG markers); an empty map removes every flag.
   */
  setAlerts(byRobot: Map<string, string[]>): void {
    const before = this.flags;
    this.flags = byRobot;
    for (const id of new Set([...before.keys(), ...byRobot.keys()])) {
      const m = this.robots.get(id);
      if (m !== undefined) this.outline(id, m);
    }
  }

  private outline(id: string, m: RobotMarker): void {
    const kinds = this.flags.get(id);
    m.dot.setStyle(kinds !== undefined ? { color: '#d00', weight: 4 } : { color: m.online ? '#123' : '#777', weight: 2 });
    const path = m.dot.getElement();
    if (!(path instanceof SVGElement)) return;
    if (kinds === undefined) delete path.dataset.alerts;
    else path.dataset.alerts = kinds.join(' ');
  }

  /** Draws the fleet's floor plan under everything else (or removes it with null). */
  setFloorPlan(plan: { url: string; corners: Corners; width: number; height: number } | null): void {
    this.floorPlan?.remove();
    this.floorPlan = null;
    if (plan === null) return;
    this.floorPlan = new FloorPlanLayer(plan.url, plan.corners, plan.width, plan.height);
    this.floorPlan.addTo(this.map);
  }

  /** Fits the view to the robots and shapes once, when there is something to fit. */
  fitOnce(): void {
    if (this.fitted) return;
    const bounds = L.latLngBounds([]);
    for (const m of this.robots.values()) bounds.extend(m.dot.getLatLng());
    this.shapes.eachLayer((l) => {
      if (l instanceof L.GeoJSON) bounds.extend(l.getBounds());
    });
    if (this.floorPlan !== null) bounds.extend(this.floorPlan.bounds());
    if (!bounds.isValid()) return;
    this.fitted = true;
    this.map.fitBounds(bounds.pad(0.3), { maxZoom: 19 });
  }

  /** Shows one robot's position trail ([lon, lat] pairs from the history API), or none. */
  setTrail(coords: number[][] | null): void {
    this.trail?.remove();
    this.trail = null;
    if (coords === null || coords.length < 2) return;
    const latLngs = coords.map(([lon, lat]) => L.latLng(lat ?? 0, lon ?? 0));
    this.trail = L.polyline(latLngs, { color: '#e80', weight: 2, opacity: 0.8, className: 'robot-trail' }).addTo(this.map);
  }

  /** Leaflet must re-measure after its container changed size. */
  resize(): void {
    this.map.invalidateSize();
  }

  /** Removes the map and its listeners. */
  destroy(): void {
    this.map.remove();
  }
}
