// The sessions list, live (session.status from the event stream, or loaded again without it), with create and the
// lifecycle actions.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useRefresh } from '../connection.js';
import { useEvents } from '../events.js';
import { ConfirmButton, ErrorBox, Field, StatusBadge, Table, useAction, useLoad } from '../ui.js';

/** start / stop / restart / logout / delete for one session; `onDone` reloads what the page shows. */
export function SessionActions({ session, onDone }) {
  const action = useAction();
  const post = (verb) => action.run(async () => (await api('POST', `/api/sessions/${encodeURIComponent(session.name)}/${verb}`), onDone()));
  const running = session.status !== 'DISCONNECTED';
  return html`<span class="actions">
    ${running ? html`<button type="button" onClick=${() => post('stop')}>Stop</button>` : html`<button type="button" onClick=${() => post('start')}>Start</button>`}
    <button type="button" onClick=${() => post('restart')}>Restart</button>
    <${ConfirmButton} label="Log out" question=${`Log ${session.name} out?`} onConfirm=${() => post('logout')} />
    <${ConfirmButton} label="Delete" question=${`Delete ${session.name}?`} onConfirm=${() => action.run(async () => (await api('DELETE', `/api/sessions/${encodeURIComponent(session.name)}`), onDone(true)))} />
    <${ErrorBox} error=${action.error} />
  </span>`;
}

function CreateSession({ onCreated }) {
  const [form, setForm] = useState({ name: '', engine: 'baileys', proxy: '', safeMode: false, start: true });
  const action = useAction();
  const set = (field) => (event) => setForm({ ...form, [field]: event.currentTarget.type === 'checkbox' ? event.currentTarget.checked : event.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const body = { name: form.name.trim(), engine: form.engine, start: form.start, config: { safeMode: form.safeMode } };
      if (form.proxy.trim()) body.proxy = form.proxy.trim();
      const { data } = await api('POST', '/api/sessions', body);
      onCreated(data);
    });
  };
  return html`<section class="card" aria-labelledby="h-create">
    <h2 id="h-create">New session</h2>
    <form onSubmit=${submit} class="form">
      <${Field} label="Name" hint="letters, digits, . _ -"><input name="name" required maxlength="64" pattern="[a-zA-Z0-9][a-zA-Z0-9._\\-]{0,63}" value=${form.name} onInput=${set('name')} /><//>
      <${Field} label="Engine">
        <select name="engine" value=${form.engine} onChange=${set('engine')}>
          <option value="baileys">baileys (WhatsApp)</option>
          <option value="sandbox">sandbox (simulated)</option>
        </select>
      <//>
      <${Field} label="Proxy (optional)" hint="http(s):// or socks5:// URL"><input name="proxy" type="url" value=${form.proxy} onInput=${set('proxy')} /><//>
      <label class="check"><input type="checkbox" name="safeMode" checked=${form.safeMode} onChange=${set('safeMode')} /> Safe mode (pause like a person typing)</label>
      <label class="check"><input type="checkbox" name="start" checked=${form.start} onChange=${set('start')} /> Start now (shows the pairing QR)</label>
      <button type="submit" class="primary" disabled=${action.busy}>Create session</button>
    </form>
    <${ErrorBox} error=${action.error} />
  </section>`;
}

export function Sessions({ caps }) {
  const list = useLoad(async () => (await api('GET', '/api/sessions')).data, []);
  const [live, setLive] = useState({});
  useEvents((event) => {
    if (event.event === 'session.status') setLive((s) => ({ ...s, [event.session]: event.payload }));
    if (event.event === 'session.connected' || event.event === 'session.logged_out') list.reload();
  });
  // statuses heard before a refresh are older than the list it loads
  useRefresh(() => setLive({}));
  const manage = caps.can('sessions:manage');
  const rows = (list.value ?? []).map((session) => ({ ...session, ...(live[session.name] ? { status: live[session.name].status, statusReason: live[session.name].statusReason } : {}) }));
  return html`<h1>Sessions</h1>
    <${ErrorBox} error=${list.error} />
    ${list.value?.length === 0 && !list.error ? html`<p>No sessions yet.</p>` : null}
    ${rows.length
      ? html`<${Table} label="Sessions" head=${['Name', 'Status', 'Phone', 'Engine', ...(manage ? ['Actions'] : [])]}>
          ${rows.map(
            (session) => html`<tr data-session=${session.name}>
              <td><a href="#/sessions/${encodeURIComponent(session.name)}">${session.name}</a></td>
              <td><${StatusBadge} status=${session.status} reason=${session.statusReason} /></td>
              <td>${session.phoneNumber ?? '—'}</td>
              <td>${session.engine}</td>
              ${manage ? html`<td><${SessionActions} session=${session} onDone=${() => list.reload()} /></td>` : null}
            </tr>`,
          )}
        <//>`
      : null}
    ${manage ? html`<${CreateSession} onCreated=${(session) => (location.hash = `#/sessions/${encodeURIComponent(session.name)}`)} />` : null}`;
}
