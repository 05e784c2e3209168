// One webhook: edit it, rotate its signing key (shown once), delete it, and its delivery log (status filter, paging, a
// delivery's body and last error, retry). #/webhooks/7/failed opens the log on its failed deliveries (the overview links so).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ConfirmButton, ErrorBox, formatTime, Secret, Table, useAction, useLoad } from '../ui.js';
import { newSigningKey, WebhookForm } from './webhooks.js';

const STATUSES = ['pending', 'succeeded', 'failed'];
/** the status filter a link asked for: #/webhooks/{id}/{status} */
const statusInHash = () => {
  const wanted = location.hash.split('/')[3];
  return STATUSES.includes(wanted) ? wanted : '';
};

const PAGE_SIZE = 20;

function DeliveryDetail({ webhookId, delivery }) {
  const detail = useLoad(async () => (await api('GET', `/api/webhooks/${webhookId}/deliveries/${encodeURIComponent(delivery.id)}`)).data, [delivery.id, delivery.updatedAt]);
  let body = detail.value?.body;
  try {
    body = body && JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // shown as sent
  }
  return html`<div class="delivery-detail">
    <${ErrorBox} error=${detail.error} />
    <p><strong>Last error:</strong> <span data-testid="last-error">${delivery.lastError ?? 'none'}</span></p>
    ${body ? html`<pre aria-label="Delivery body" tabindex="0">${body}</pre>` : null}
  </div>`;
}

function Deliveries({ webhookId }) {
  const [status, setStatus] = useState(statusInHash);
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState();
  const log = useLoad(async () => api('GET', `/api/webhooks/${webhookId}/deliveries${query({ status, limit: PAGE_SIZE, offset })}`), [webhookId, status, offset]);
  const retry = useAction();
  const rows = log.value?.data ?? [];
  const total = log.value?.total ?? 0;
  return html`<section class="card wide" aria-labelledby="h-deliveries">
    <h2 id="h-deliveries">Delivery log</h2>
    <div class="toolbar">
      <label class="label" for="delivery-status">Status</label>
        <select id="delivery-status" name="status" value=${status} onChange=${(e) => (setStatus(e.currentTarget.value), setOffset(0))}>
          <option value="">all</option>${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      <button type="button" onClick=${log.reload}>Refresh</button>
    </div>
    <${ErrorBox} error=${log.error || retry.error} />
    ${rows.length === 0 && !log.loading ? html`<p>No deliveries.</p>` : null}
    ${rows.length
      ? html`<${Table} label="Deliveries" head=${['When', 'Event', 'Status', 'Attempts', 'HTTP', 'Actions']}>
          ${rows.map(
            (d) => html`<tr data-delivery=${d.id} data-status=${d.status}>
                <td>${formatTime(d.createdAt)}</td><td><code>${d.event}</code></td><td><span class="badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'off' : 'wait'}">${d.status}</span></td>
                <td>${d.attempts}</td><td>${d.lastStatusCode ?? '—'}</td>
                <td class="actions">
                  <button type="button" aria-expanded=${open === d.id} onClick=${() => setOpen(open === d.id ? undefined : d.id)}>${open === d.id ? 'Hide' : 'Details'}</button>
                  ${d.status !== 'pending' ? html`<button type="button" onClick=${() => retry.run(async () => (await api('POST', `/api/webhooks/${webhookId}/deliveries/${encodeURIComponent(d.id)}/retry`), log.reload()))}>Retry</button>` : null}
                </td>
              </tr>
              ${open === d.id ? html`<tr><td colspan="6"><${DeliveryDetail} webhookId=${webhookId} delivery=${d} /></td></tr>` : null}`,
          )}
        <//>`
      : null}
    <nav class="pager" aria-label="Delivery pages">
      <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))}>Newer</button>
      <span>${total ? `${offset + 1}–${Math.min(offset + PAGE_SIZE, total)} of ${total}` : ''}</span>
      <button type="button" disabled=${offset + PAGE_SIZE >= total} onClick=${() => setOffset(offset + PAGE_SIZE)}>Older</button>
    </nav>
  </section>`;
}

/** A new signing key, made here and sent with PUT: the answer never holds a key, so this is the one time it shows. */
function RotateKey({ webhookId }) {
  const [key, setKey] = useState();
  const rotate = useAction();
  return html`<div class="rotate">
    <${ConfirmButton}
      label="Rotate signing key"
      danger=${false}
      question="Replace the signing key? The receiver must check with the new one from the next attempt."
      onConfirm=${() =>
        rotate.run(async () => {
          const hmacKey = newSigningKey();
          await api('PUT', `/api/webhooks/${webhookId}`, { hmacKey });
          setKey(hmacKey);
        })}
    />
    <${ErrorBox} error=${rotate.error} />
    ${key ? html`<div data-testid="rotated-key"><${Secret} label="New signing key (hmacKey)" value=${key} /></div>` : null}
  </div>`;
}

export function Webhook({ id }) {
  const webhook = useLoad(async () => (await api('GET', `/api/webhooks/${encodeURIComponent(id)}`)).data, [id]);
  const remove = useAction();
  const w = webhook.value;
  if (webhook.error) return html`<h1>Webhook ${id}</h1><${ErrorBox} error=${webhook.error} />`;
  if (!w) return html`<h1>Webhook ${id}</h1><p>Loading…</p>`;
  return html`<h1>Webhook ${w.id}</h1>
    <p class="url">${w.url}</p>
    <div class="cards">
      <section class="card" aria-labelledby=${`h-webhook-edit-${w.id}`}>
        <h2 id=${`h-webhook-edit-${w.id}`}>Settings</h2>
        <${WebhookForm} key=${w.updatedAt} webhook=${w} onSaved=${() => webhook.reload()} />
        <${RotateKey} webhookId=${w.id} />
        <${ConfirmButton} label="Delete" question=${`Delete webhook ${w.id}?`} onConfirm=${() => remove.run(async () => (await api('DELETE', `/api/webhooks/${w.id}`), (location.hash = '#/webhooks')))} />
        <${ErrorBox} error=${remove.error} />
      </section>
      <${Deliveries} webhookId=${w.id} />
    </div>`;
}
