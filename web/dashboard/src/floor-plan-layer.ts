/**
 * A floor plan image on the Leaflet map, placed by its corners (any rotation or affine placement,
 * which Leaflet's own image overlay cannot do): an <img> in a pane below the shapes, moved with a CSS
 * matrix computed from the corners' layer points at every zoom. Styles go through the CSSOM
 * (element.style), which the page's CSP allows.
 */
import * as L from 'leaflet';
import type { Corners } from './floor-plan-geo.js';

export class FloorPlanLayer extends L.Layer {
  private readonly img: HTMLImageElement;
  private host: L.Map | null = null;

  constructor(
    url: string,
    private readonly corners: Corners,
    private readonly width: number,
    private readonly height: number,
  ) {
    super();
    this.img = document.createElement('img');
    this.img.className = 'floor-plan leaflet-zoom-hide';
    this.img.alt = 'Floor plan';
    this.img.src = url;
    this.img.dataset.corners = JSON.stringify(corners);
    this.img.style.position = 'absolute';
    this.img.style.left = '0';
    this.img.style.top = '0';
    this.img.style.width = `${width}px`;
    this.img.style.height = `${height}px`;
    this.img.style.transformOrigin = '0 0';
    this.img.style.pointerEvents = 'none';
  }

  override onAdd(map: L.Map): this {
    this.host = map;
    const pane = map.getPane('floorPlan') ?? map.createPane('floorPlan');
    // Above the map's ground, below features, rules and robots (overlayPane is 400).
    pane.style.zIndex = '350';
    pane.append(this.img);
    map.on('zoomend viewreset', this.place);
    this.place();
    return this;
  }

  override onRemove(map: L.Map): this {
    map.off('zoomend viewreset', this.place);
    this.img.remove();
    this.host = null;
    return this;
  }

  /** The plan's extent, for fitting the view. */
  bounds(): L.LatLngBounds {
    const { topLeft, topRight, bottomLeft } = this.corners;
    const bottomRight: [number, number] = [topRight[0] + bottomLeft[0] - topLeft[0], topRight[1] + bottomLeft[1] - topLeft[1]];
    return L.latLngBounds([topLeft, topRight, bottomLeft, bottomRight]);
  }

  private readonly place = (): void => {
    const map = this.host;
    if (map === null) return;
    const p0 = map.latLngToLayerPoint(this.corners.topLeft);
    const p1 = map.latLngToLayerPoint(this.corners.topRight);
    const p2 = map.latLngToLayerPoint(this.corners.bottomLeft);
    const a = (p1.x - p0.x) / this.width;
    const b = (p1.y - p0.y) / this.width;
    const c = (p2.x - p0.x) / this.height;
    const d = (p2.y - p0.y) / this.height;
    this.img.style.transform = `matrix(${a}, ${b}, ${c}, ${d}, ${p0.x}, ${p0.y})`;
  };
}
