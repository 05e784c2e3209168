// API keys: the list, create (scopes and sessions, never more than the signed-in key holds), shown once, revoke.
// The master key manages every key (/api/admin/keys); an API key with keys:manage those it created (/api/account/keys).
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, ErrorBox, Field, formatTime, Secret, Table, useAction, useLoad } from '../ui.js';
// the daemon's own list, bundled at build time: a scope added there is offered here
import { SCOPES } from '../../src/auth/scopes.js';

function CreateKey({ caps, base, onCreated }) {
  const sessions = useLoad(async () => (await api('GET', '/api/sessions')).data.map((s) => s.name), []);
  const grantable = SCOPES.filter((scope) => (scope === '*' ? caps.master || caps.can('*') : caps.can(scope)));
  const [form, setForm] = useState({ name: '', scopes: new Set(), sessions: new Set(), limit: '' });
  const action = useAction();
  const toggle = (field, value) => (event) => {
    const next = new Set(form[field]);
    if (event.currentTarget.checked) next.add(value);
    else next.delete(value);
    setForm({ ...form, [field]: next });
  };
  const limited = caps.sessions !== null;
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const body = { name: form.name.trim(), scopes: [...form.scopes] };
      if (form.sessions.size || limited) body.sessions = [...form.sessions];
      if (form.limit) body.rateLimitPerMinute = Number(form.limit);
      onCreated((await api('POST', base, body)).data);
      setForm({ name: '', scopes: new Set(), sessions: new Set(), limit: '' });
    });
  };
  return html`<section class="card" aria-labelledby="h-new-key">
    <h2 id="h-new-key">New API key</h2>
    <form onSubmit=${submit} class="form">
      <${Field} label="Name"><input name="name" required maxlength="100" value=${form.name} onInput=${(e) => setForm({ ...form, name: e.currentTarget.value })} /><//>
      <fieldset>
        <legend>Scopes</legend>
        ${grantable.map((scope) => html`<label class="check"><input type="checkbox" name="scope" value=${scope} checked=${form.scopes.has(scope)} onChange=${toggle('scopes', scope)} /> ${scope}</label>`)}
      </fieldset>
      <fieldset>
        <legend>Sessions ${limited ? '(pick at least one)' : '(none picked = every session)'}</legend>
        <${ErrorBox} error=${sessions.error} />
        ${(sessions.value ?? []).map((name) => html`<label class="check"><input type="checkbox" name="session" value=${name} checked=${form.sessions.has(name)} onChange=${toggle('sessions', name)} /> ${name}</label>`)}
      </fieldset>
      <${Field} label="Requests a minute" hint="empty = unlimited"><input name="rateLimitPerMinute" type="number" min="1" max="100000" value=${form.limit} onInput=${(e) => setForm({ ...form, limit: e.currentTarget.value })} /><//>
      <button type="submit" class="primary" disabled=${action.busy || form.scopes.size === 0}>Create key</button>
    </form>
    <${ErrorBox} error=${action.error} />
  </section>`;
}

export function Keys({ caps }) {
  const base = caps.master ? '/api/admin/keys' : '/api/account/keys';
  const list = useLoad(async () => (await api('GET', base)).data, [base]);
  const [created, setCreated] = useState();
  const revoke = useAction();
  return html`<h1>API keys</h1>
    <${ErrorBox} error=${list.error || revoke.error} />
    ${created ? html`<div class="card" data-testid="new-key"><${Secret} label=${`API key “${created.name}”`} value=${created.key} /></div>` : null}
    ${list.value?.length === 0 ? html`<p>No API keys yet.</p>` : null}
    ${list.value?.length
      ? html`<${Table} label="API keys" head=${['Name', 'Prefix', 'Scopes', 'Sessions', 'Created', 'Last used', 'Actions']}>
          ${list.value.map(
            (k) => html`<tr data-key=${k.id}>
              <td>${k.name}</td><td><code>${k.prefix}</code></td><td>${k.scopes.join(', ')}</td><td>${k.sessions ? k.sessions.join(', ') || '(none)' : 'all'}</td>
              <td>${formatTime(k.createdAt)}</td><td>${formatTime(k.lastUsedAt)}</td>
              <td><${ConfirmButton} label="Revoke" question=${`Revoke ${k.name}?`} onConfirm=${() => revoke.run(async () => (await api('DELETE', `${base}/${encodeURIComponent(k.id)}`), list.reload()))} /></td>
            </tr>`,
          )}
        <//>`
      : null}
    <${CreateKey} caps=${caps} base=${base} onCreated=${(key) => (setCreated(key), list.reload())} />`;
}
