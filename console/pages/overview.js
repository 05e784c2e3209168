// Health at a glance: version, uptime, sessions by state, and the webhook backlog (pending and failed deliveries).
import { html } from 'htm/preact';
import { api, query } from '../api.js';
import { useEvents } from '../events.js';
import { ErrorBox, formatDuration, Table, useLoad } from '../ui.js';

async function backlog() {
  const { data: webhooks } = await api('GET', '/api/webhooks');
  return Promise.all(
    webhooks.map(async (webhook) => {
      const count = async (status) => (await api('GET', `/api/webhooks/${webhook.id}/deliveries${query({ status, limit: 1 })}`)).total;
      return { webhook, pending: await count('pending'), failed: await count('failed') };
    }),
  );
}

export function Overview({ caps }) {
  const health = useLoad(async () => (await api('GET', '/api/health')).data, []);
  const sessions = useLoad(async () => (caps.can('sessions:read') ? (await api('GET', '/api/sessions')).data : undefined), []);
  const hooks = useLoad(async () => (caps.can('webhooks:manage') ? backlog() : undefined), []);
  useEvents((event) => {
    if (event.event === 'session.status') sessions.reload();
  });

  const byState = {};
  for (const session of sessions.value ?? []) byState[session.status] = (byState[session.status] ?? 0) + 1;
  const h = health.value;
  return html`<h1>Overview</h1>
    <${ErrorBox} error=${health.error || sessions.error || hooks.error} />
    <div class="cards">
      <section class="card" aria-labelledby="h-daemon">
        <h2 id="h-daemon">Daemon</h2>
        ${h
          ? html`<dl>
              <dt>Status</dt><dd>${h.status}</dd>
              <dt>Version</dt><dd data-testid="version">${h.version}</dd>
              <dt>Uptime</dt><dd>${formatDuration(h.uptime)}</dd>
            </dl>`
          : html`<p>Loading…</p>`}
      </section>
      <section class="card" aria-labelledby="h-sessions">
        <h2 id="h-sessions">Sessions</h2>
        ${sessions.value
          ? html`<dl>
              <dt>Total</dt><dd>${sessions.value.length}</dd>
              ${['CONNECTED', 'CONNECTING', 'DISCONNECTED'].map((state) => html`<dt>${state}</dt><dd data-state=${state}>${byState[state] ?? 0}</dd>`)}
            </dl>`
          : h
            ? html`<dl><dt>Total</dt><dd>${h.sessions.total}</dd><dt>Connected</dt><dd>${h.sessions.connected}</dd></dl>`
            : null}
      </section>
      ${caps.can('webhooks:manage')
        ? html`<section class="card wide" aria-labelledby="h-backlog">
            <h2 id="h-backlog">Webhook backlog</h2>
            ${hooks.value?.length === 0 ? html`<p>No webhooks yet.</p>` : null}
            ${hooks.value?.length
              ? html`<${Table} label="Webhook backlog" head=${['Webhook', 'Pending', 'Failed']}>
                  ${hooks.value.map(({ webhook, pending, failed }) => html`<tr><td><a href="#/webhooks/${webhook.id}">${webhook.url}</a></td><td>${pending}</td><td>${failed}</td></tr>`)}
                <//>`
              : null}
            <button type="button" onClick=${hooks.reload}>Refresh</button>
          </section>`
        : null}
    </div>`;
}
