// One session: its account, lifecycle actions, pairing until it is connected, a test send, the messages the store
// holds, its live events, and its client rules.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { useEvents } from '../events.js';
import { Chat, ErrorBox, Field, formatTime, StatusBadge, Table, useAction, useLoad, useShownStatus } from '../ui.js';
import { SessionActions } from './sessions.js';
import { Pairing } from './pairing.js';
import { ClientRules } from './client-rules.js';
import { chatHref, failureText } from './conversations.js';

const readAsDataUrl = (file) =>
  new Promise((done, fail) => {
    const reader = new FileReader();
    reader.onload = () => done(reader.result);
    reader.onerror = () => fail(reader.error);
    reader.readAsDataURL(file);
  });

function SendTest({ session }) {
  const [form, setForm] = useState({ chatId: '', type: 'text', text: '' });
  const [file, setFile] = useState();
  const [sent, setSent] = useState();
  const action = useAction();
  const submit = (event) => {
    event.preventDefault();
    action.run(async () => {
      const body = { chatId: form.chatId.trim(), type: form.type };
      if (form.type === 'text') body.text = form.text;
      else {
        if (!file) throw Object.assign(new Error('choose a file to send'), { code: 'NO_FILE' });
        body.base64 = await readAsDataUrl(file);
        if (file.type) body.mimeType = file.type;
        if (form.type === 'file') body.filename = file.name;
        if (form.text) body.caption = form.text;
      }
      setSent((await api('POST', `/api/sessions/${encodeURIComponent(session)}/messages/send`, body)).data);
    });
  };
  return html`<section class="card" aria-labelledby="h-send">
    <h2 id="h-send">Send a test message</h2>
    <form onSubmit=${submit} class="form">
      <${Field} label="To" hint="phone number or JID"><input name="chatId" required value=${form.chatId} onInput=${(e) => setForm({ ...form, chatId: e.currentTarget.value })} /><//>
      <${Field} label="Type">
        <select name="type" value=${form.type} onChange=${(e) => setForm({ ...form, type: e.currentTarget.value })}>
          <option value="text">text</option>
          <option value="image">image</option>
          <option value="file">file</option>
        </select>
      <//>
      ${form.type !== 'text' ? html`<${Field} label="File"><input type="file" name="file" accept=${form.type === 'image' ? 'image/*' : undefined} onChange=${(e) => setFile(e.currentTarget.files[0])} /><//>` : null}
      <${Field} label=${form.type === 'text' ? 'Text' : 'Caption (optional)'}><textarea name="text" rows="2" required=${form.type === 'text'} value=${form.text} onInput=${(e) => setForm({ ...form, text: e.currentTarget.value })}></textarea><//>
      <button type="submit" class="primary" disabled=${action.busy}>Send</button>
    </form>
    <${ErrorBox} error=${action.error} />
    ${sent ? html`<p role="status">Sent: <code data-testid="sent-id">${sent.messageId}</code></p>` : null}
  </section>`;
}

/** The names the session's contacts go by, by JID and LID (only for a key with contacts:read; else none). */
function useContactNames(session, allowed) {
  const contacts = useLoad(async () => (allowed ? (await api('GET', `/api/sessions/${encodeURIComponent(session)}/contacts${query({ limit: 1000 })}`)).data : []), [session, allowed]);
  const names = new Map();
  for (const contact of contacts.value ?? []) {
    const name = contact.savedName ?? contact.name ?? contact.businessName;
    if (!name) continue;
    names.set(contact.id, name);
    if (contact.lid) names.set(contact.lid, name);
  }
  return names;
}

/** Why a failed message failed: the list holds its status only, its detail the failure. */
function FailureReason({ session, messageId }) {
  const detail = useLoad(async () => (await api('GET', `/api/sessions/${encodeURIComponent(session)}/messages/${encodeURIComponent(messageId)}`)).data, [session, messageId]);
  const failure = detail.value?.failure;
  return failure ? html`<span class="failure" data-testid="failure">${failureText(failure)}</span>` : null;
}

function Messages({ session, caps }) {
  const messages = useLoad(async () => (await api('GET', `/api/sessions/${encodeURIComponent(session)}/messages${query({ limit: 20 })}`)).data, [session]);
  const names = useContactNames(session, caps.can('contacts:read'));
  useEvents((event) => {
    if (event.session === session && ['message.sent', 'message.received', 'message.failed'].includes(event.event)) messages.reload();
  });
  return html`<section class="card wide" aria-labelledby="h-messages">
    <h2 id="h-messages">Recent messages</h2>
    <${ErrorBox} error=${messages.error} />
    ${messages.value?.length === 0 ? html`<p>No stored messages.</p>` : null}
    ${messages.value?.length
      ? html`<${Table} label="Recent messages" head=${['When', 'Chat', 'Direction', 'Type', 'Text', 'Status']}>
          ${messages.value.map(
            (m) => html`<tr data-message=${m.messageId}>
              <td><time datetime=${m.timestamp}>${formatTime(m.timestamp)}</time></td><td><${Chat} jid=${m.chatId} name=${names.get(m.chatId)} /></td><td>${m.fromMe ? 'sent' : 'received'}</td><td>${m.type}</td><td class="text">${m.revoked ? '(deleted)' : (m.text ?? '')}</td><td>${m.status}${m.status === 'failed' ? html`<br /><${FailureReason} session=${session} messageId=${m.messageId} />` : null}</td>
            </tr>`,
          )}
        <//>`
      : null}
  </section>`;
}

/** The sends the governor holds for later, next first, each cancellable (docs/API.md "Send governor"). */
function Queue({ session, caps }) {
  const queue = useLoad(async () => (await api('GET', `/api/sessions/${encodeURIComponent(session)}/queue${query({ limit: 100 })}`)).data, [session]);
  const action = useAction();
  useEvents((event) => {
    if (event.session === session && (event.event === 'message.sent' || event.event === 'command.result')) queue.reload();
  });
  const cancel = (entry) =>
    action.run(async () => {
      await api('DELETE', `/api/sessions/${encodeURIComponent(session)}/queue/${encodeURIComponent(entry.id)}`);
      queue.reload();
    });
  const entries = queue.value ?? [];
  return html`<section class="card wide" aria-labelledby="h-queue">
    <h2 id="h-queue">Send queue</h2>
    <${ErrorBox} error=${queue.error ?? action.error} />
    ${queue.value && entries.length === 0 ? html`<p data-testid="queue-empty">No sends waiting: the governor lets them go at once.</p>` : null}
    ${entries.length
      ? html`<${Table} label="Queued sends" head=${['#', 'Queued', 'Chat', 'Type', 'First contact', '']}>
          ${entries.map(
            (e) => html`<tr data-queue-entry=${e.id}>
              <td>${e.position}</td><td><time datetime=${e.queuedAt}>${formatTime(e.queuedAt)}</time></td><td><${Chat} jid=${e.chatId} /></td><td>${e.type}</td><td>${e.firstContact ? 'yes' : 'no'}</td>
              <td>${caps.can('messages:send') ? html`<button type="button" onClick=${() => cancel(e)} disabled=${action.busy} aria-label=${`Cancel the send to ${e.chatId}`}>Cancel</button>` : null}</td>
            </tr>`,
          )}
        <//>`
      : null}
  </section>`;
}

/** The session's decryption counters since the daemon started (docs/API.md, session resource `decryption`). */
function Decryption({ counts }) {
  const failures = Object.values(counts.failures).reduce((a, b) => a + b, 0);
  return html`<dl data-testid="decryption">
    <dt>Undecryptable</dt><dd>${failures} <span class="muted">(${Object.entries(counts.failures).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`).join(', ') || 'none'})</span></dd>
    <dt>Retry receipts</dt><dd>${counts.retryReceiptsSent} sent, ${counts.retryReceiptsReceived} received</dd>
    <dt>Retries exhausted</dt><dd>${counts.retriesExhausted.incoming} incoming, ${counts.retriesExhausted.outgoing} sent</dd>
  </dl>`;
}

function LiveEvents({ session, stream }) {
  const [events, setEvents] = useState([]);
  useEvents((event) => {
    if (event.session === session) setEvents((list) => [event, ...list].slice(0, 50));
  });
  return html`<section class="card wide" aria-labelledby="h-events">
    <h2 id="h-events">Live events</h2>
    ${stream.unavailable ? html`<p>Live events need the <code>webhooks:manage</code> scope.</p>` : events.length === 0 ? html`<p>Waiting for events…</p>` : null}
    <ol class="events" aria-live="polite" aria-label="Events of this session, newest first" tabindex="0">
      ${events.map(
        (e) => html`<li data-event=${e.event}>
          <details><summary><code>${e.event}</code> <time datetime=${e.timestamp}>${formatTime(e.timestamp)}</time></summary><pre tabindex="0">${JSON.stringify(e.payload, null, 2)}</pre></details>
        </li>`,
      )}
    </ol>
  </section>`;
}

/** Typing before a send as the session sets it (governor.typing wins over safeMode), else the gateway's setting. */
function typingShown(config) {
  const typing = config?.governor?.typing ?? config?.safeMode;
  return typing === undefined || typing === null ? 'as the gateway sets it (governor.typing)' : typing ? 'on' : 'off';
}

/** Why the network ended the session (lastError.logoutReason), in words an operator acts on. */
const LOGOUT_WORDS = {
  unlinked: 'unlinked from the phone: pair again',
  replaced: 'replaced by another client using the same credentials',
  banned: 'the account is banned',
  temporarily_banned: 'the account is banned for a while',
  locked: 'the account is locked: open WhatsApp on the phone',
  key_error: "the server rejected the device's keys: pair again",
};

export function Session({ id, caps, stream }) {
  const session = useLoad(async () => (await api('GET', `/api/sessions/${encodeURIComponent(id)}`)).data, [id]);
  useEvents((event) => {
    if (event.session === id && ['session.status', 'session.connected', 'session.logged_out', 'session.health'].includes(event.event)) session.reload();
  });
  const s = session.value;
  const shownStatus = useShownStatus(s?.status);
  const manage = caps.can('sessions:manage');
  if (session.error && !s) return html`<h1>Session ${id}</h1><${ErrorBox} error=${session.error} />`;
  if (!s) return html`<h1>Session ${id}</h1><p>Loading…</p>`;
  const deleted = () => (location.hash = '#/sessions');
  return html`<h1>Session ${s.name} <${StatusBadge} status=${s.status} reason=${s.statusReason} /></h1>
    <${ErrorBox} error=${session.error} />
    <p class="page-links"><a href=${chatHref(s.name)} data-testid="conversations-link">Conversations</a> <span class="muted">its chats, their history, search and a composer</span></p>
    ${manage ? html`<${SessionActions} session=${s} onDone=${(gone) => (gone ? deleted() : session.reload())} />` : null}
    <div class="cards">
      <section class="card" aria-labelledby="h-account">
        <h2 id="h-account">Account</h2>
        <dl>
          <dt>Status</dt><dd data-testid="status">${shownStatus}</dd>
          <dt>Health</dt><dd data-testid="health">${s.health ?? '—'}${s.lastFrameAt ? html` <span class="muted">last frame <time datetime=${s.lastFrameAt}>${formatTime(s.lastFrameAt)}</time></span>` : null}</dd>
          ${s.lastError?.logoutReason ? html`<dt>Logged out</dt><dd data-testid="logout-reason">${LOGOUT_WORDS[s.lastError.logoutReason] ?? s.lastError.logoutReason}</dd>` : null}
          <dt>Phone</dt><dd>${s.phoneNumber ?? '—'}</dd>
          <dt>Name</dt><dd>${s.pushName ?? '—'}</dd>
          ${s.businessName ? html`<dt>Business</dt><dd>${s.businessName}</dd>` : null}
          <dt>Platform</dt><dd>${s.platform ?? '—'}</dd>
          <dt>LID</dt><dd>${s.lid ?? '—'}</dd>
          <dt>Engine</dt><dd>${s.engine}</dd>
          ${s.proxy ? html`<dt>Proxy</dt><dd>${s.proxy}</dd>` : null}
          <dt>Typing before sends</dt><dd>${typingShown(s.config)}</dd>
          ${s.config?.governor?.exempt ? html`<dt>Send governor</dt><dd>exempt</dd>` : null}
          <dt>Created</dt><dd><time datetime=${s.createdAt}>${formatTime(s.createdAt)}</time></dd>
        </dl>
      </section>
      ${s.status !== 'CONNECTED' && manage ? html`<${Pairing} session=${s} master=${caps.master} onChange=${() => session.reload()} />` : null}
      ${s.status === 'CONNECTED' && caps.can('messages:send') ? html`<${SendTest} session=${s.name} />` : null}
      ${s.decryption ? html`<section class="card" aria-labelledby="h-decryption"><h2 id="h-decryption">Decryption</h2><${Decryption} counts=${s.decryption} /></section>` : null}
      <${Messages} session=${s.name} caps=${caps} />
      <${Queue} session=${s.name} caps=${caps} />
      <${LiveEvents} session=${s.name} stream=${stream} />
      ${manage ? html`<${ClientRules} session=${s.name} />` : null}
    </div>`;
}
