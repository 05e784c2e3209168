// Webhooks: the list, and the form that creates one or edits it (events as a checklist of every type, session filter,
// retries, custom headers, the signing scheme). The signing key is shown once: when created, and when rotated.
import { html } from 'htm/preact';
import { useId, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, Secret, Table, useAction, useLoad } from '../ui.js';
// the daemon's own lists, bundled at build time: an event type or scheme added there is offered here
import { EVENT_TYPES } from '../../src/events/catalogue.js';
import { SIGNATURE_SCHEMES } from '../../src/webhooks/signature-schemes.js';
import { RETRY_POLICY_NAMES } from '../../src/webhooks/retry-policy.js';

const SCHEME_LABELS = {
  body: 'body: the raw body',
  'timestamp.body': 'timestamp.body: X-Webhook-Timestamp, a dot, the raw body (receivers can refuse replays)',
};

const parseHeaders = (text) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const colon = line.indexOf(':');
      return colon < 0 ? { name: line, value: '' } : { name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
    });

/** 32 random bytes as 64 hex characters, as the daemon makes a key itself. */
export function newSigningKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Every event type as a checkbox; none checked means every event, those added later included. */
function EventChecklist({ selected, onChange }) {
  const hint = `${useId()}-hint`;
  const toggle = (type) => (event) => {
    const next = new Set(selected);
    if (event.currentTarget.checked) next.add(type);
    else next.delete(type);
    onChange(next);
  };
  return html`<fieldset class="event-types" aria-describedby=${hint}>
    <legend>Events (${selected.size ? `${selected.size} of ${EVENT_TYPES.length}` : 'every event'})</legend>
    <small id=${hint} class="events-hint">None checked = every event, including types added later.</small>
    <div class="events-list">
      ${EVENT_TYPES.map((type) => html`<label class="check"><input type="checkbox" name="event" value=${type} checked=${selected.has(type)} onChange=${toggle(type)} /> ${type}</label>`)}
    </div>
    <button type="button" disabled=${selected.size === 0} onClick=${() => onChange(new Set())}>Clear (every event)</button>
  </fieldset>`;
}

/** Create (no `webhook`) or edit a webhook; calls onSaved(webhook) with the API's answer. */
export function WebhookForm({ webhook, onSaved }) {
  const [form, setForm] = useState({
    url: webhook?.url ?? '',
    events: new Set(webhook?.events ?? []),
    session: webhook?.session ?? '',
    attempts: webhook?.retries.attempts ?? 3,
    delaySeconds: webhook?.retries.delaySeconds ?? 5,
    policy: webhook?.retries.policy ?? 'exponential',
    signatureScheme: webhook?.signatureScheme ?? 'body',
    headers: '',
    enabled: webhook?.enabled ?? true,
  });
  const action = useAction();
  const set = (field) => (event) => setForm({ ...form, [field]: event.currentTarget.type === 'checkbox' ? event.currentTarget.checked : event.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const body = {
        url: form.url.trim(),
        // in the catalogue's order, so the list reads the same however it was ticked
        events: EVENT_TYPES.filter((type) => form.events.has(type)),
        enabled: form.enabled,
        retries: { attempts: Number(form.attempts), delaySeconds: Number(form.delaySeconds), policy: form.policy },
        signatureScheme: form.signatureScheme,
      };
      if (form.headers.trim()) body.headers = parseHeaders(form.headers);
      if (form.session.trim()) body.session = form.session.trim();
      else if (webhook) body.session = null;
      const { data } = webhook ? await api('PUT', `/api/webhooks/${webhook.id}`, body) : await api('POST', '/api/webhooks', body);
      onSaved(data);
    });
  };
  const id = webhook ? `edit-${webhook.id}` : 'new';
  return html`<form onSubmit=${submit} class="form" aria-labelledby=${`h-webhook-${id}`}>
    <${Field} label="URL"><input name="url" type="url" required value=${form.url} onInput=${set('url')} /><//>
    <${EventChecklist} selected=${form.events} onChange=${(events) => setForm({ ...form, events })} />
    <${Field} label="Only this session" hint="empty = every session"><input name="session" value=${form.session} onInput=${set('session')} /><//>
    <fieldset class="row">
      <legend>Retries</legend>
      <${Field} label="Attempts"><input name="attempts" type="number" min="0" max="20" value=${form.attempts} onInput=${set('attempts')} /><//>
      <${Field} label="Delay (s)"><input name="delaySeconds" type="number" min="0" max="3600" value=${form.delaySeconds} onInput=${set('delaySeconds')} /><//>
      <${Field} label="Policy">
        <select name="policy" value=${form.policy} onChange=${set('policy')}>
          ${RETRY_POLICY_NAMES.map((name) => html`<option value=${name}>${name}</option>`)}
        </select>
      <//>
    </fieldset>
    <${Field} label="Signature covers" hint="what X-Webhook-Signature (HMAC-SHA256 with the signing key) is computed over">
      <select name="signatureScheme" value=${form.signatureScheme} onChange=${set('signatureScheme')}>
        ${SIGNATURE_SCHEMES.map((scheme) => html`<option value=${scheme}>${SCHEME_LABELS[scheme] ?? scheme}</option>`)}
      </select>
    <//>
    <${Field} label="Custom headers" hint=${webhook?.headers.length ? `one "Name: value" a line; empty keeps the current ones (${webhook.headers.map((h) => h.name).join(', ')})` : 'one "Name: value" a line'}>
      <textarea name="headers" rows="2" value=${form.headers} onInput=${set('headers')}></textarea>
    <//>
    <label class="check"><input type="checkbox" name="enabled" checked=${form.enabled} onChange=${set('enabled')} /> Enabled</label>
    <button type="submit" class="primary" disabled=${action.busy}>${webhook ? 'Save webhook' : 'Create webhook'}</button>
    <${ErrorBox} error=${action.error} />
  </form>`;
}

export function Webhooks() {
  const list = useLoad(async () => (await api('GET', '/api/webhooks')).data, []);
  const [created, setCreated] = useState();
  return html`<h1>Webhooks</h1>
    <${ErrorBox} error=${list.error} />
    ${list.value?.length === 0 ? html`<p>No webhooks yet.</p>` : null}
    ${list.value?.length
      ? html`<${Table} label="Webhooks" head=${['URL', 'Events', 'Session', 'Signature covers', 'Enabled']}>
          ${list.value.map(
            (w) => html`<tr data-webhook=${w.id}>
              <td><a href="#/webhooks/${w.id}">${w.url}</a></td><td>${w.events.length ? w.events.join(', ') : 'all'}</td><td>${w.session ?? 'all'}</td><td><code>${w.signatureScheme}</code></td><td>${w.enabled ? 'yes' : 'no'}</td>
            </tr>`,
          )}
        <//>`
      : null}
    ${created ? html`<div class="card" data-testid="new-webhook"><p>Webhook <a href="#/webhooks/${created.id}">${created.url}</a> created.</p><${Secret} label="Signing key (hmacKey)" value=${created.hmacKey} /></div>` : null}
    <section class="card" aria-labelledby="h-webhook-new">
      <h2 id="h-webhook-new">New webhook</h2>
      <${WebhookForm} onSaved=${(webhook) => (setCreated(webhook), list.reload())} />
    </section>`;
}
