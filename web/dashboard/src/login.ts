/** The login form: email and password to POST /v1/sessions (the gateway sets the HttpOnly cookie). */
import { ApiError, type Api } from './api.js';
import { h } from './dom.js';
import type { SessionInfo } from './types.js';

/** Shows the form in `root` and resolves with the session once a login succeeds. */
export function login(root: HTMLElement, api: Api): Promise<SessionInfo> {
  return new Promise((resolve) => {
    const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, id: 'login-email' });
    const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true, id: 'login-password' });
    const message = h('p', { class: 'bad', role: 'alert' });
    const submit = h('button', { type: 'submit' }, 'Log in');
    const form = h(
      'form',
      { class: 'login', 'aria-label': 'Log in' },
      h('h1', {}, 'fleet-gateway'),
      h('label', { for: 'login-email' }, 'Email'),
      email,
      h('label', { for: 'login-password' }, 'Password'),
      password,
      submit,
      message,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      submit.disabled = true;
      message.textContent = '';
      api
        .post<SessionInfo>('/v1/sessions', { email: email.value, password: password.value })
        .then((info) => {
          password.value = '';
          resolve(info);
        })
        .catch((err: unknown) => {
          message.textContent = err instanceof ApiError && err.status === 401 ? 'Wrong email or password.' : (err as Error).message;
          submit.disabled = false;
        });
    });
    root.replaceChildren(form);
    email.focus();
  });
}
