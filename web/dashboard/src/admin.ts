/**
 * Administration from the page: the organization's users (admins: add, disable, enable; through
 * `…/users`) and API keys (any user, at most their role's permissions: create, revoke; through
 * `…/api-keys`). A new key's secret is shown once, in the page only, and forgotten when the panel
 * redraws; the gateway never answers it again.
 */
import type { Api } from './api.js';
import { clock, h, replace } from './dom.js';
import type { ApiKey, Page, SessionInfo, User } from './types.js';

export class AdminPanel {
  readonly el = h('section', { class: 'panel admin', 'aria-label': 'Users and API keys' });
  private users: User[] = [];
  private keys: ApiKey[] = [];
  private message = '';
  private secret: { name: string; value: string } | null = null;

  constructor(
    private readonly api: Api,
    private readonly info: SessionInfo,
    private readonly fleetId: string,
  ) {}

  private get isAdmin(): boolean {
    return this.info.session.user.role === 'admin';
  }

  private get base(): string {
    return `/v1/orgs/${this.info.session.orgId}`;
  }

  /** Reads users (admins) and keys, then draws. */
  async load(): Promise<void> {
    try {
      const [users, keys] = await Promise.all([
        this.isAdmin ? this.api.get<{ items: User[] }>(`${this.base}/users`) : Promise.resolve({ items: [] }),
        this.api.get<Page<ApiKey>>(`${this.base}/api-keys`, { limit: 200 }),
      ]);
      this.users = users.items;
      this.keys = keys.items;
    } catch (err) {
      this.message = (err as Error).message;
    }
    this.render();
  }

  private async act(what: () => Promise<unknown>, done: string): Promise<void> {
    try {
      await what();
      this.message = done;
    } catch (err) {
      this.message = (err as Error).message;
    }
    await this.load();
  }

  private render(): void {
    replace(
      this.el,
      h('h2', {}, this.isAdmin ? 'Users and API keys' : 'API keys'),
      h('p', { class: 'admin-message', role: 'status', 'aria-live': 'polite' }, this.message),
      this.isAdmin ? this.userSection() : null,
      this.keySection(),
    );
  }

  private userSection(): HTMLElement {
    const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off', id: 'new-user-email' });
    const role = h('select', { name: 'role', id: 'new-user-role' }, h('option', { value: 'viewer' }, 'viewer'), h('option', { value: 'operator', selected: true }, 'operator'), h('option', { value: 'admin' }, 'admin'));
    const password = h('input', { type: 'password', name: 'password', required: true, minlength: 12, autocomplete: 'new-password', id: 'new-user-password' });
    const form = h(
      'form',
      { class: 'add-user', 'aria-label': 'Add a user' },
      h('label', { for: 'new-user-email' }, 'Email', email),
      h('label', { for: 'new-user-role' }, 'Role', role),
      h('label', { for: 'new-user-password' }, 'First password (12+ characters)', password),
      h('button', { type: 'submit', 'data-action': 'add-user' }, 'Add user'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const body = { email: email.value, role: role.value, password: password.value };
      password.value = '';
      void this.act(() => this.api.post(`${this.base}/users`, body), `User ${body.email} added.`);
    });
    const me = this.info.session.user.userId;
    return h(
      'div',
      { class: 'users' },
      h('h3', {}, 'Users'),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', {}, 'email'), h('th', {}, 'role'), h('th', {}, 'state'), h('th', {}, h('span', { class: 'visually-hidden' }, 'commands')))),
        h(
          'tbody',
          {},
          ...this.users.map((u) =>
            h(
              'tr',
              { class: 'user-row', 'data-user-id': u.userId, 'data-email': u.email, 'data-state': u.state },
              h('td', {}, u.email),
              h('td', {}, u.role),
              h('td', {}, u.state),
              h(
                'td',
                { class: 'actions' },
                u.userId === me
                  ? h('span', { class: 'muted' }, 'you')
                  : u.state === 'active'
                    ? h('button', { type: 'button', class: 'stop', 'data-action': 'disable-user', 'aria-label': `Disable ${u.email}`, onclick: () => void this.act(() => this.api.post(`${this.base}/users/${u.userId}/disable`), `${u.email} disabled.`) }, 'Disable')
                    : h('button', { type: 'button', 'data-action': 'enable-user', 'aria-label': `Enable ${u.email}`, onclick: () => void this.act(() => this.api.post(`${this.base}/users/${u.userId}/enable`), `${u.email} enabled.`) }, 'Enable'),
              ),
            ),
          ),
        ),
      ),
      form,
    );
  }

  private keySection(): HTMLElement {
    const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 100, id: 'new-key-name' });
    const scope = h('select', { name: 'scope', id: 'new-key-scope' }, h('option', { value: 'fleet' }, 'this fleet'), h('option', { value: 'org' }, 'every fleet'));
    const perms = this.info.session.permissions.map((p) => ({ p, box: h('input', { type: 'checkbox', value: p, checked: p.endsWith(':read'), id: `perm-${p.replace(':', '-')}` }) }));
    const form = h(
      'form',
      { class: 'add-key', 'aria-label': 'Create an API key' },
      h('label', { for: 'new-key-name' }, 'Name', name),
      h('label', { for: 'new-key-scope' }, 'Fleets', scope),
      h('fieldset', {}, h('legend', {}, 'Permissions'), ...perms.map(({ p, box }) => h('label', { for: box.id }, box, p))),
      h('button', { type: 'submit', 'data-action': 'create-key' }, 'Create key'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const permissions = perms.filter(({ box }) => box.checked).map(({ p }) => p);
      const body = { name: name.value, permissions, ...(scope.value === 'fleet' ? { fleet_id: this.fleetId } : {}) };
      void (async () => {
        try {
          const r = await this.api.post<{ secret: string; key: ApiKey }>(`${this.base}/api-keys`, body, { 'idempotency-key': crypto.randomUUID() });
          this.secret = { name: r.key.name ?? r.key.apiKeyId, value: r.secret };
          this.message = `Key ${body.name} created.`;
        } catch (err) {
          this.message = (err as Error).message;
        }
        await this.load();
      })();
    });
    const secret = this.secret;
    // Shown once: the next redraw without a new key forgets it.
    this.secret = null;
    return h(
      'div',
      { class: 'keys' },
      h('h3', {}, 'API keys'),
      secret !== null
        ? h('p', { class: 'secret-once', role: 'alert' }, `The secret of ${secret.name}, shown only now: copy it. `, h('code', { class: 'new-secret' }, secret.value))
        : null,
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'state'), h('th', {}, 'created'), h('th', {}, h('span', { class: 'visually-hidden' }, 'commands')))),
        h(
          'tbody',
          {},
          ...this.keys.map((k) =>
            h(
              'tr',
              { class: 'key-row', 'data-key-id': k.apiKeyId, 'data-state': k.state, 'data-name': k.name ?? '' },
              h('td', { title: k.permissions.join(', ') }, k.name ?? k.apiKeyId.slice(0, 8), k.fleetId === null ? ' (all fleets)' : ''),
              h('td', {}, k.state),
              h('td', {}, clock(k.createdAtMs)),
              h(
                'td',
                { class: 'actions' },
                k.state === 'active'
                  ? h('button', { type: 'button', class: 'stop', 'data-action': 'revoke-key', 'aria-label': `Revoke ${k.name ?? k.apiKeyId}`, onclick: () => void this.act(() => this.api.del(`${this.base}/api-keys/${k.apiKeyId}`), `Key ${k.name ?? ''} revoked.`) }, 'Revoke')
                  : null,
              ),
            ),
          ),
        ),
      ),
      form,
    );
  }
}
