/**
 * The fleet's floor plan: read for everyone (drawn on the map once placed), changed by admins. An
 * admin uploads a PNG or SVG (`PUT …/floor-plan`, base64 in JSON) and places it by two or three
 * reference points: each an image pixel (typed, or clicked on the preview) and the spot on the ground
 * (typed, or clicked on the map), saved with `PUT …/floor-plan/placement`.
 */
import { ApiError, type Api } from './api.js';
import { h, replace } from './dom.js';
import { cornersOf, type RefPoint } from './floor-plan-geo.js';
import type { MapView } from './map-view.js';

export interface FloorPlan {
  contentType: string;
  bytes: number;
  etag: string;
  imageUrl: string;
  widthPx: number | null;
  heightPx: number | null;
  placement: RefPoint[] | null;
}

const ROWS = 3;
/** Largest file the page sends (the gateway refuses more with 413 anyway). */
const MAX_BYTES = 760 * 1024;

export class FloorPlanPanel {
  readonly el = h('section', { class: 'panel floor-plan-panel', 'aria-label': 'Floor plan' });
  private plan: FloorPlan | null = null;
  private message = '';
  private active = 0;
  private readonly inputs = Array.from({ length: ROWS }, (_, i) => ({
    x: h('input', { type: 'number', step: 'any', 'aria-label': `Point ${i + 1} image x (pixels)`, 'data-point': i, 'data-field': 'x' }),
    y: h('input', { type: 'number', step: 'any', 'aria-label': `Point ${i + 1} image y (pixels)`, 'data-point': i, 'data-field': 'y' }),
    lat: h('input', { type: 'number', step: 'any', 'aria-label': `Point ${i + 1} latitude`, 'data-point': i, 'data-field': 'lat' }),
    lon: h('input', { type: 'number', step: 'any', 'aria-label': `Point ${i + 1} longitude`, 'data-point': i, 'data-field': 'lon' }),
  }));

  constructor(
    private readonly api: Api,
    private readonly base: string,
    private readonly map: MapView,
    private readonly isAdmin: boolean,
  ) {}

  /** Reads the plan and draws it (nothing when the fleet has none). */
  async load(): Promise<void> {
    try {
      this.plan = (await this.api.get<{ plan: FloorPlan | null }>(`${this.base}/floor-plan`)).plan;
    } catch (err) {
      this.plan = null;
      // An older gateway without floor plans answers 404 `No route for …`: the map simply has none.
      if (!(err instanceof ApiError && err.status === 404)) this.message = (err as Error).message;
    }
    this.draw();
    this.render();
  }

  /** Stops taking map clicks (logout, another fleet). */
  stop(): void {
    this.map.pick = null;
  }

  private draw(): void {
    const p = this.plan;
    const corners = p?.placement && p.widthPx !== null && p.heightPx !== null ? cornersOf(p.placement, p.widthPx, p.heightPx) : null;
    // The ETag in the URL's query keeps a browser from showing an old image after an upload.
    this.map.setFloorPlan(p !== null && corners !== null ? { url: `${p.imageUrl}?v=${encodeURIComponent(p.etag)}`, corners, width: p.widthPx!, height: p.heightPx! } : null);
  }

  private async upload(file: File): Promise<void> {
    if (file.size > MAX_BYTES) {
      this.message = `${file.name} is larger than ${MAX_BYTES} bytes.`;
      this.render();
      return;
    }
    const type = file.type === 'image/svg+xml' || file.name.toLowerCase().endsWith('.svg') ? 'image/svg+xml' : 'image/png';
    const bytes = new Uint8Array(await file.arrayBuffer());
    let bin = '';
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    try {
      this.plan = await this.api.put<FloorPlan>(`${this.base}/floor-plan`, { content_type: type, data_base64: btoa(bin) });
      this.message = `${file.name} uploaded: now place it by two or three points.`;
    } catch (err) {
      this.message = `Upload failed: ${(err as Error).message}`;
    }
    this.draw();
    this.render();
  }

  private async place(): Promise<void> {
    const points: RefPoint[] = [];
    for (const row of this.inputs) {
      const v = { x: row.x.valueAsNumber, y: row.y.valueAsNumber, lat: row.lat.valueAsNumber, lon: row.lon.valueAsNumber };
      if (Object.values(v).every(Number.isFinite)) points.push(v);
    }
    if (points.length < 2) {
      this.message = 'Fill in at least two points (image x, y and latitude, longitude each).';
      this.render();
      return;
    }
    try {
      this.plan = await this.api.put<FloorPlan>(`${this.base}/floor-plan/placement`, { points });
      this.message = `Placed by ${points.length} points.`;
    } catch (err) {
      this.message = `Placement failed: ${(err as Error).message}`;
    }
    this.draw();
    this.render();
  }

  private render(): void {
    const p = this.plan;
    const status = p === null ? 'No floor plan: the map draws features and field rules alone.' : `${p.contentType === 'image/svg+xml' ? 'SVG' : 'PNG'}, ${p.widthPx ?? '?'} × ${p.heightPx ?? '?'} px, ${p.placement === null ? 'not placed yet' : `placed by ${p.placement.length} points`}.`;
    if (!this.isAdmin) {
      replace(this.el, h('h2', {}, 'Floor plan'), h('p', { class: 'muted', 'data-placed': p?.placement?.length ?? 0 }, status));
      return;
    }
    const file = h('input', { type: 'file', accept: 'image/png,image/svg+xml,.png,.svg', id: 'floor-plan-file' });
    file.addEventListener('change', () => {
      const f = file.files?.[0];
      if (f !== undefined) void this.upload(f);
    });
    for (const [i, p2] of (p?.placement ?? []).entries()) {
      const row = this.inputs[i];
      if (row === undefined || row.x.value !== '') continue;
      row.x.value = String(p2.x);
      row.y.value = String(p2.y);
      row.lat.value = String(p2.lat);
      row.lon.value = String(p2.lon);
    }
    // Clicks on the preview fill the active point's pixel, clicks on the map its latitude/longitude.
    this.map.pick = p === null ? null : (lat, lon) => {
      const row = this.inputs[this.active]!;
      row.lat.value = lat.toFixed(7);
      row.lon.value = lon.toFixed(7);
    };
    const preview = p === null ? null : h('img', { class: 'floor-plan-preview', src: `${p.imageUrl}?v=${encodeURIComponent(p.etag)}`, alt: 'Floor plan preview: click to take the active point\'s pixel' });
    preview?.addEventListener('click', (e) => {
      const r = preview.getBoundingClientRect();
      const row = this.inputs[this.active]!;
      row.x.value = String(Math.round(((e.clientX - r.left) / r.width) * (p?.widthPx ?? preview.naturalWidth)));
      row.y.value = String(Math.round(((e.clientY - r.top) / r.height) * (p?.heightPx ?? preview.naturalHeight)));
    });
    const save = h('button', { type: 'button', 'data-action': 'place-floor-plan', onclick: () => void this.place() }, 'Save placement');
    const remove = h('button', { type: 'button', class: 'stop', 'data-action': 'remove-floor-plan' }, 'Remove');
    remove.addEventListener('click', () => {
      void this.api.del(`${this.base}/floor-plan`).then(
        () => this.load(),
        (err: unknown) => {
          this.message = (err as Error).message;
          this.render();
        },
      );
    });
    replace(
      this.el,
      h('h2', {}, 'Floor plan'),
      h('p', { class: 'muted', 'data-placed': p?.placement?.length ?? 0 }, status),
      h('p', { class: 'floor-plan-message', role: 'status' }, this.message),
      h('label', { for: 'floor-plan-file' }, 'Upload a PNG or SVG (at most 760 KiB) ', file),
      p === null
        ? null
        : h(
            'div',
            { class: 'placement' },
            preview,
            h(
              'table',
              {},
              h('caption', {}, 'Reference points: pick a row, then click the preview and the map (or type)'),
              h('thead', {}, h('tr', {}, h('th', {}, 'point'), h('th', {}, 'x'), h('th', {}, 'y'), h('th', {}, 'lat'), h('th', {}, 'lon'))),
              h(
                'tbody',
                {},
                ...this.inputs.map((row, i) =>
                  h(
                    'tr',
                    { class: i === this.active ? 'active' : '' },
                    h('td', {}, h('button', { type: 'button', class: i === this.active ? 'on' : '', 'aria-pressed': String(i === this.active), onclick: () => { this.active = i; this.render(); } }, `${i + 1}${i === 2 ? ' (optional)' : ''}`)),
                    h('td', {}, row.x),
                    h('td', {}, row.y),
                    h('td', {}, row.lat),
                    h('td', {}, row.lon),
                  ),
                ),
              ),
            ),
            h('div', { class: 'buttons' }, save, remove),
          ),
    );
  }
}
