/**
 * The fleet map, drawn without tiles (a depot reaches no tile server): features, field rules and
 * tracked objects as vector shapes from POST /v1/agent/get-map-context, robots as markers with a
 * heading line moved by the live stream. Leaflet's SVG renderer: no WebGL, so it also runs in a
 * headless browser. Coordinates are the gateway's latitude/longitude (the simulator's depot frame is
 * converted by the robots themselves), so shapes and robots line up.
 */
import * as L from 'leaflet';
import type { MapContext } from './types.js';

/** Length of the heading line, metres. */
const HEADING_M = 4;
const METRES_PER_DEG_LAT = 111_320;

const RULE_COLOURS: Record<string, string> = { keep_out: '#d33', speed_limit: '#e80', stop_and_wait: '#83c' };

interface RobotMarker {
  dot: L.CircleMarker;
  heading: L.Polyline;
}

export class MapView {
  readonly el: HTMLElement;
  private readonly map: L.Map;
  private readonly robots = new Map<string, RobotMarker>();
  private readonly shapes = L.layerGroup();
  private readonly objects = L.layerGroup();
  private readonly robotLayer = L.layerGroup();
  private trail: L.Polyline | null = null;
  private fitted = false;

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
  }

  /** Draws the fleet's features, field rules and objects (replacing the previous drawing). */
  setContext(ctx: MapContext): void {
    this.shapes.clearLayers();
    this.objects.clearLayers();
    for (const f of ctx.features ?? []) {
      L.geoJSON(f.geometry, { style: { color: '#2a6fdb', weight: 1, fillOpacity: 0.08, className: 'map-feature' } })
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
      if (o.geometry !== null) L.geoJSON(o.geometry, { style: { color: '#666', weight: 1, fillOpacity: 0.2 } }).addTo(this.objects);
      L.circleMarker([o.latitude, o.longitude], { radius: 4, color: '#444', fillColor: '#bbb', fillOpacity: 1, weight: 1, className: 'map-object' })
        .bindTooltip(o.object_class)
        .addTo(this.objects);
    }
  }

  /** Places or moves a robot's marker. */
  setRobot(id: string, name: string, lat: number | null, lon: number | null, headingDeg: number | null, online: boolean, stopped: boolean): void {
    if (lat === null || lon === null || !Number.isFinite(lat) || !Number.isFinite(lon)) return;
    let m = this.robots.get(id);
    if (m === undefined) {
      const dot = L.circleMarker([lat, lon], { radius: 7, weight: 2, fillOpacity: 0.9, className: 'robot-marker' }).bindTooltip(name, { permanent: true, direction: 'right', offset: [8, 0], className: 'robot-label' });
      dot.on('click', () => this.onSelect(id));
      const heading = L.polyline([[lat, lon], [lat, lon]], { weight: 3, className: 'robot-heading' });
      m = { dot, heading };
      this.robots.set(id, m);
      heading.addTo(this.robotLayer);
      dot.addTo(this.robotLayer);
      const path = dot.getElement();
      if (path instanceof SVGElement) path.dataset.robotId = id;
    }
    m.dot.setLatLng([lat, lon]);
    m.dot.setStyle({ color: online ? '#124' : '#999', fillColor: stopped ? '#d33' : online ? '#2b8' : '#ccc' });
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
    }
  }

  /** Fits the view to the robots and shapes once, when there is something to fit. */
  fitOnce(): void {
    if (this.fitted) return;
    const bounds = L.latLngBounds([]);
    for (const m of this.robots.values()) bounds.extend(m.dot.getLatLng());
    this.shapes.eachLayer((l) => {
      if (l instanceof L.GeoJSON) bounds.extend(l.getBounds());
    });
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
