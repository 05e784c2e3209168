// A session's client rules (what browser client tokens may do) and "mint a test token". The form shows once the stored
// rules are loaded: a form filled before they arrive would be reset by them.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, ErrorBox, Field, Secret, useAction, useLoad } from '../ui.js';

const ACTIONS = ['send_message', 'send_reaction', 'send_typing', 'send_seen', 'read_presence', 'subscribe_presence', 'read_contact'];
const EMPTY = { recipientMode: 'conversation', enabled: true, allowedActions: '', rateLimitPerMinute: 0, dailySendCap: 0, allowedOrigins: '' };

export function ClientRules({ session }) {
  const path = `/api/sessions/${encodeURIComponent(session)}/client-rules`;
  const rules = useLoad(async () => {
    try {
      return (await api('GET', path)).data;
    } catch (err) {
      if (err.code === 'CLIENT_RULES_NOT_FOUND') return null;
      throw err;
    }
  }, [session]);
  const [form, setForm] = useState(EMPTY);
  const [token, setToken] = useState();
  const save = useAction();
  const mint = useAction();
  useEffect(() => {
    if (rules.value !== undefined) setForm(rules.value ? { ...EMPTY, ...rules.value } : EMPTY);
  }, [rules.value]);

  const actions = new Set(form.allowedActions.split(',').filter(Boolean));
  const toggle = (name) => (event) => {
    if (event.currentTarget.checked) actions.add(name);
    else actions.delete(name);
    setForm({ ...form, allowedActions: [...actions].join(',') });
  };
  const submit = (event) => {
    event.preventDefault();
    const { recipientMode, enabled, allowedActions, rateLimitPerMinute, dailySendCap, allowedOrigins } = form;
    save.run(async () => (await api('PUT', path, { recipientMode, enabled, allowedActions, rateLimitPerMinute: Number(rateLimitPerMinute), dailySendCap: Number(dailySendCap), allowedOrigins }), rules.reload()));
  };
  const mintToken = () => mint.run(async () => setToken((await api('POST', '/api/client-tokens', { session, ephemeralId: 'console-test', ttlSeconds: 300 })).data));

  return html`<section class="card" aria-labelledby="h-rules">
    <h2 id="h-rules">Client rules</h2>
    <${ErrorBox} error=${rules.error} />
    ${rules.value === null ? html`<p>No rules: client tokens of this session are refused.</p>` : null}
    ${rules.value === undefined ? (rules.error ? null : html`<p>Loading…</p>`) : html`<form onSubmit=${submit} class="form">
      <${Field} label="Recipients">
        <select name="recipientMode" value=${form.recipientMode} onChange=${(e) => setForm({ ...form, recipientMode: e.currentTarget.value })}>
          <option value="none">none (reads only)</option>
          <option value="conversation">conversation (only who wrote first)</option>
          <option value="any">any</option>
        </select>
      <//>
      <fieldset>
        <legend>Allowed actions</legend>
        ${ACTIONS.map((name) => html`<label class="check"><input type="checkbox" checked=${actions.has(name)} onChange=${toggle(name)} /> ${name}</label>`)}
      </fieldset>
      <${Field} label="Requests a minute per visitor" hint="0 = unlimited"><input type="number" min="0" value=${form.rateLimitPerMinute} onInput=${(e) => setForm({ ...form, rateLimitPerMinute: e.currentTarget.value })} /><//>
      <${Field} label="Sends a day per visitor" hint="0 = unlimited"><input type="number" min="0" value=${form.dailySendCap} onInput=${(e) => setForm({ ...form, dailySendCap: e.currentTarget.value })} /><//>
      <${Field} label="Allowed origins" hint="comma-separated; empty = any"><input value=${form.allowedOrigins} onInput=${(e) => setForm({ ...form, allowedOrigins: e.currentTarget.value })} /><//>
      <label class="check"><input type="checkbox" checked=${form.enabled} onChange=${(e) => setForm({ ...form, enabled: e.currentTarget.checked })} /> Enabled</label>
      <span class="actions">
        <button type="submit" class="primary" disabled=${save.busy}>Save rules</button>
        ${rules.value ? html`<${ConfirmButton} label="Delete rules" question="Delete the rules and revoke every token?" onConfirm=${() => save.run(async () => (await api('DELETE', path), rules.reload()))} />` : null}
      </span>
    </form>`}
    <${ErrorBox} error=${save.error} />
    ${rules.value ? html`<button type="button" onClick=${mintToken}>Mint a test token</button>` : null}
    <${ErrorBox} error=${mint.error} />
    ${token ? html`<${Secret} label=${`Client token (expires ${new Date(token.expiresAt).toLocaleTimeString()})`} value=${token.token} />` : null}
  </section>`;
}
