// Webhooks: the list, and the form that creates one or edits it (events, session filter, retries, custom headers).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, Secret, Table, useAction, useLoad } from '../ui.js';

const parseHeaders = (text) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const colon = line.indexOf(':');
      return colon < 0 ? { name: line, value: '' } : { name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
    });

/** Create (no `webhook`) or edit a webhook; calls onSaved(webhook) with the API's answer. */
export function WebhookForm({ webhook, onSaved }) {
  const [form, setForm] = useState({
    url: webhook?.url ?? '',
    events: webhook ? (webhook.events.length ? webhook.events.join(',') : '*') : '*',
    session: webhook?.session ?? '',
    attempts: webhook?.retries.attempts ?? 3,
    delaySeconds: webhook?.retries.delaySeconds ?? 5,
    policy: webhook?.retries.policy ?? 'exponential',
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
        events: form.events.split(',').map((e) => e.trim()).filter(Boolean),
        enabled: form.enabled,
        retries: { attempts: Number(form.attempts), delaySeconds: Number(form.delaySeconds), policy: form.policy },
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
    <${Field} label="Events" hint="comma-separated event types, or * for all"><input name="events" value=${form.events} onInput=${set('events')} /><//>
    <${Field} label="Only this session" hint="empty = every session"><input name="session" value=${form.session} onInput=${set('session')} /><//>
    <fieldset class="row">
      <legend>Retries</legend>
      <${Field} label="Attempts"><input name="attempts" type="number" min="0" max="20" value=${form.attempts} onInput=${set('attempts')} /><//>
      <${Field} label="Delay (s)"><input name="delaySeconds" type="number" min="0" max="3600" value=${form.delaySeconds} onInput=${set('delaySeconds')} /><//>
      <${Field} label="Policy">
        <select name="policy" value=${form.policy} onChange=${set('policy')}>
          <option value="exponential">exponential</option><option value="linear">linear</option><option value="constant">constant</option>
        </select>
      <//>
    </fieldset>
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
      ? html`<${Table} label="Webhooks" head=${['URL', 'Events', 'Session', 'Enabled']}>
          ${list.value.map(
            (w) => html`<tr data-webhook=${w.id}>
              <td><a href="#/webhooks/${w.id}">${w.url}</a></td><td>${w.events.length ? w.events.join(', ') : 'all'}</td><td>${w.session ?? 'all'}</td><td>${w.enabled ? 'yes' : 'no'}</td>
            </tr>`,
          )}
        <//>`
      : null}
    ${created ? html`<div class="card"><p>Webhook <a href="#/webhooks/${created.id}">${created.url}</a> created.</p><${Secret} label="Signing key (hmacKey)" value=${created.hmacKey} /></div>` : null}
    <section class="card" aria-labelledby="h-webhook-new">
      <h2 id="h-webhook-new">New webhook</h2>
      <${WebhookForm} onSaved=${(webhook) => (setCreated(webhook), list.reload())} />
    </section>`;
}
