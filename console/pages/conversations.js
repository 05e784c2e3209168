// A session's conversations: its chats by last activity on the left (GET …/chats, a page at a time), the chosen chat's
// history on the right (GET …/chats/{chatId}/messages, older pages as the reader scrolls up or asks), images fetched
// with the key and shown through object URLs, search (GET …/messages/search) whose results open their chat at the
// message, and a composer that sends text. New messages arrive through the console's event stream (or its poll).
// Whatever a message says is rendered as text, never as markup.
import { html } from 'htm/preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, fetchBlob, query } from '../api.js';
import { useRefresh } from '../connection.js';
import { useEvents } from '../events.js';
import { ErrorBox, Field, formatChat, formatTime, useAction, useLoad } from '../ui.js';

const CHATS_PAGE = 30;
const HISTORY_PAGE = 30;
/** context shown above a search hit opened in its chat */
const HIT_CONTEXT = 10;
/** the history loads older messages by itself when scrolled this close to its top */
const NEAR_TOP_PX = 60;
/** a history scrolled this close to its bottom follows new messages */
const NEAR_BOTTOM_PX = 80;
const enc = encodeURIComponent;
const STATUS_ORDER = ['pending', 'sent', 'delivered', 'read'];
/** Why a sent message failed (docs/API.md "Message status"), in words. */
export const FAILURE_WORDS = {
  rate_limited: 'WhatsApp refused it: sending too fast',
  reachout_timelocked: 'WhatsApp refused it: the account may not start new chats for now',
  not_on_whatsapp: 'the number is not on WhatsApp',
  recipient_unreachable: 'the recipient could not be reached',
  decryption_retry_exhausted: 'the recipient could not decrypt it',
  timeout: 'WhatsApp never acknowledged it',
  refused: 'WhatsApp refused it',
};

/** A failed message's reason in words, with the network's code when it gave one. */
export function failureText(failure) {
  const words = FAILURE_WORDS[failure.reason] ?? failure.reason;
  return failure.code ? `${words} (${failure.code})` : words;
}
const MESSAGE_EVENTS = new Set(['message.received', 'message.sent']);
const LIST_EVENTS = new Set(['message.received', 'message.sent', 'message.ack', 'message.edited', 'message.revoked', 'message.delete', 'chat.archive', 'chat.mute', 'chat.read', 'chat.pin', 'chat.clear', 'chat.delete']);

export const chatHref = (session, chatId, messageId) => `#/chats/${enc(session)}${chatId ? `/${enc(chatId)}` : ''}${messageId ? `/${enc(messageId)}` : ''}`;
const base = (session) => `/api/sessions/${enc(session)}`;
const chatName = (chat) => chat?.name ?? formatChat(chat?.chatId);

/** "14:05" today, "Dec 3" before; the full time in the title. */
function Time({ iso }) {
  const at = new Date(iso);
  const today = at.toDateString() === new Date().toDateString();
  const short = today ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : at.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  return html`<time datetime=${iso} title=${formatTime(iso)}>${short}</time>`;
}

/** The first page of chats again, keeping the later pages already shown (a chat moved up is not listed twice). */
function useChats(session) {
  const [state, setState] = useState({ chats: [], nextCursor: null, pages: 0 });
  const [error, setError] = useState();
  const latest = useRef(0);
  const first = useCallback(async () => {
    const call = ++latest.current;
    try {
      const { data } = await api('GET', `${base(session)}/chats${query({ limit: CHATS_PAGE })}`);
      if (call !== latest.current) return;
      setError(undefined);
      setState((s) => {
        if (s.pages <= 1) return { chats: data.chats, nextCursor: data.nextCursor, pages: 1 };
        const fresh = new Set(data.chats.map((c) => c.chatId));
        const chats = [...data.chats, ...s.chats.filter((c) => !fresh.has(c.chatId))];
        chats.sort((a, b) => Date.parse(b.lastMessage?.timestamp ?? 0) - Date.parse(a.lastMessage?.timestamp ?? 0));
        return { ...s, chats };
      });
    } catch (err) {
      if (call === latest.current) setError(err);
    }
  }, [session]);
  const more = useAction();
  const next = () =>
    more.run(async () => {
      const { data } = await api('GET', `${base(session)}/chats${query({ limit: CHATS_PAGE, cursor: state.nextCursor })}`);
      setState((s) => {
        const known = new Set(s.chats.map((c) => c.chatId));
        return { chats: [...s.chats, ...data.chats.filter((c) => !known.has(c.chatId))], nextCursor: data.nextCursor, pages: s.pages + 1 };
      });
    });
  useEffect(() => {
    setState({ chats: [], nextCursor: null, pages: 0 });
    first();
  }, [first]);
  useRefresh(first);
  // a burst of events loads the list once
  const timer = useRef();
  useEffect(() => () => clearTimeout(timer.current), []);
  useEvents((event) => {
    if (event.session !== session || !LIST_EVENTS.has(event.event)) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(first, 250);
  });
  return { ...state, loaded: state.pages > 0, error: error ?? more.error, busy: more.busy, next };
}

function ChatList({ session, chats, selected }) {
  return html`<ul class="chat-list" aria-label="Chats">
    ${chats.chats.map((chat) => {
      const last = chat.lastMessage;
      const preview = last ? `${last.fromMe ? 'You: ' : ''}${last.text ?? `(${last.type})`}` : '';
      return html`<li data-chat=${chat.chatId}>
        <a href=${chatHref(session, chat.chatId)} aria-current=${chat.chatId === selected ? 'true' : undefined} title=${chat.chatId}>
          <span class="chat-top"><strong class="chat-name">${chatName(chat)}</strong>${last ? html`<${Time} iso=${last.timestamp} />` : null}</span>
          <span class="chat-bottom">
            <span class="preview">${preview}</span>
            ${chat.unreadCount ? html`<span class="unread" data-unread=${chat.unreadCount}>${chat.unreadCount}<span class="visually-hidden"> unread</span></span>` : null}
          </span>
        </a>
      </li>`;
    })}
  </ul>`;
}

/** The words of a query marked in a snippet (as text nodes: the snippet is never parsed as markup). */
function Marked({ text, q }) {
  const words = (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(Boolean);
  if (!words.length) return text;
  return text.split(new RegExp(`(${words.join('|')})`, 'giu')).map((part, i) => (i % 2 ? html`<mark>${part}</mark>` : part));
}

function SearchResults({ session, search, names, onClose }) {
  return html`<div class="search-results">
    <p class="results-head" role="status">
      <span>${search.results.length ? `${search.results.length}${search.results.length === search.limit ? '+' : ''} found for “${search.q}”` : `Nothing found for “${search.q}”`}</span>
      <button type="button" onClick=${onClose}>Back to chats</button>
    </p>
    <ul class="chat-list" aria-label="Search results">
      ${search.results.map(
        ({ message, snippet }) => html`<li data-result=${message.messageId}>
          <a href=${chatHref(session, message.chatId, message.messageId)}>
            <span class="chat-top"><strong class="chat-name">${names.get(message.chatId) ?? formatChat(message.chatId)}</strong><${Time} iso=${message.timestamp} /></span>
            <span class="preview snippet"><${Marked} text=${snippet} q=${search.q} /></span>
          </a>
        </li>`,
      )}
    </ul>
  </div>`;
}

const SEARCH_LIMIT = 50;

function SearchForm({ session, onResults }) {
  const [q, setQ] = useState('');
  const action = useAction();
  const submit = (event) => {
    event.preventDefault();
    const words = q.trim();
    if (!words) return;
    action.run(async () => {
      const { data } = await api('GET', `${base(session)}/messages/search${query({ q: words, limit: SEARCH_LIMIT })}`);
      onResults({ q: words, results: data.results, limit: SEARCH_LIMIT });
    });
  };
  return html`<form role="search" class="search" onSubmit=${submit}>
    <label class="visually-hidden" for="conversation-search">Search messages</label>
    <input id="conversation-search" type="search" name="q" maxlength="500" placeholder="Search messages" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} />
    <button type="submit" disabled=${action.busy}>Search</button>
    <${ErrorBox} error=${action.error} />
  </form>`;
}

/** An image message's picture: its bytes fetched with the key (once it scrolls into view) and shown by object URL. */
function MediaImage({ session, mediaId, allowed, onLoad }) {
  const [state, setState] = useState({});
  const holder = useRef();
  useEffect(() => {
    if (!allowed) return undefined;
    let url;
    let stopped = false;
    const load = () =>
      fetchBlob('POST', `${base(session)}/media/${enc(mediaId)}/download`)
        .then((blob) => {
          if (stopped) return;
          url = URL.createObjectURL(blob);
          setState({ url });
        })
        .catch((error) => stopped || setState({ error }));
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      load();
    });
    observer.observe(holder.current);
    return () => {
      stopped = true;
      observer.disconnect();
      if (url) URL.revokeObjectURL(url);
    };
  }, [session, mediaId, allowed]);
  if (!allowed) return html`<span class="media-note">(image: showing it needs the <code>media:read</code> scope)</span>`;
  if (state.url) return html`<img class="media" src=${state.url} alt="Image" data-media=${mediaId} onLoad=${onLoad} />`;
  if (state.error) return html`<span class="media-note" data-media-error=${state.error.code}>(image unavailable: ${state.error.code})</span>`;
  return html`<span class="media-note" ref=${holder}>Loading image…</span>`;
}

/** Another media file: a button that fetches it with the key and hands it to the browser as a download. */
function MediaDownload({ session, message }) {
  const action = useAction();
  const save = () =>
    action.run(async () => {
      // typed as bytes: a file opened from its blob: URL never renders as a page of the console's origin
      const bytes = await fetchBlob('POST', `${base(session)}/media/${enc(message.mediaId)}/download`);
      const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `${message.type}-${message.messageId}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  return html`<span class="media-note">(${message.type}) <button type="button" onClick=${save} disabled=${action.busy}>Download</button><${ErrorBox} error=${action.error} /></span>`;
}

function Message({ session, message, caps, focused, onMediaLoad }) {
  const image = message.mediaId && (message.type === 'image' || message.type === 'sticker');
  const body = message.revoked ? html`<em class="media-note">(deleted)</em>` : message.text !== null && message.text !== undefined ? html`<span class="text">${message.text}</span>` : null;
  return html`<li class="bubble ${message.fromMe ? 'mine' : 'theirs'} ${focused ? 'focused' : ''}" data-message=${message.messageId} data-status=${message.status}>
    ${!message.revoked && image ? html`<${MediaImage} session=${session} mediaId=${message.mediaId} allowed=${caps.can('media:read')} onLoad=${onMediaLoad} />` : null}
    ${!message.revoked && message.mediaId && !image ? (caps.can('media:read') ? html`<${MediaDownload} session=${session} message=${message} />` : html`<span class="media-note">(${message.type})</span>`) : null}
    ${!message.revoked && !message.mediaId && body === null ? html`<span class="media-note">(${message.type})</span>` : null}
    ${body}
    <span class="meta"><${Time} iso=${message.timestamp} />${message.edited ? ' · edited' : ''}${message.fromMe ? ` · ${message.status}` : ''}</span>
    ${message.status === 'failed' && message.failure ? html`<span class="failure" role="note" data-testid="failure">${failureText(message.failure)}</span>` : null}
  </li>`;
}

/** A stored message as an event first shows it (loading the chat's newest messages replaces it with the stored one). */
function fromPayload(p) {
  return { messageId: p.messageId, chatId: p.chatId, fromMe: p.fromMe, type: p.type, text: p.text ?? p.caption ?? null, mediaId: p.mediaId ?? null, status: p.fromMe ? (p.status ?? 'sent') : 'received', revoked: false, edited: false, starred: false, timestamp: p.timestamp };
}

/** Messages by id, oldest first, a newer copy replacing an older one. */
function merge(list, added) {
  const byId = new Map(list.map((m) => [m.messageId, m]));
  for (const m of added) byId.set(m.messageId, { ...byId.get(m.messageId), ...m });
  return [...byId.values()].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0));
}

function History({ session, chat, chatId, focus, caps }) {
  const [state, setState] = useState({ messages: [], nextBefore: null, nextAfter: null, atEnd: true, loaded: false });
  const [error, setError] = useState();
  const pane = useRef();
  /** after the next render: 'bottom', {keep: distance from the bottom} (older messages were added above), or 'focus' */
  const scroll = useRef();
  const current = useRef(state);
  current.current = state;
  const busy = useRef({ older: false, newer: false, again: false });
  const path = `${base(session)}/chats/${enc(chatId)}/messages`;

  const open = useCallback(async () => {
    setError(undefined);
    try {
      if (focus) {
        const older = (await api('GET', `${path}${query({ before: focus, limit: HIT_CONTEXT })}`)).data;
        const newer = (await api('GET', `${path}${query({ after: older.nextAfter ?? '1970-01-01T00:00:00.000Z', limit: HISTORY_PAGE })}`)).data;
        scroll.current = 'focus';
        setState({ messages: [...older.messages, ...newer.messages], nextBefore: older.nextBefore, nextAfter: newer.nextAfter, atEnd: newer.messages.length < HISTORY_PAGE, loaded: true });
      } else {
        const { data } = await api('GET', `${path}${query({ limit: HISTORY_PAGE })}`);
        scroll.current = 'bottom';
        setState({ messages: data.messages, nextBefore: data.nextBefore, nextAfter: data.nextAfter, atEnd: true, loaded: true });
      }
    } catch (err) {
      setError(err);
    }
  }, [path, focus]);
  useEffect(() => {
    setState({ messages: [], nextBefore: null, nextAfter: null, atEnd: true, loaded: false });
    open();
  }, [open]);

  const older = async () => {
    const { nextBefore } = current.current;
    if (!nextBefore || busy.current.older) return;
    busy.current.older = true;
    try {
      const { data } = await api('GET', `${path}${query({ before: nextBefore, limit: HISTORY_PAGE })}`);
      const el = pane.current;
      scroll.current = el ? { keep: el.scrollHeight - el.scrollTop } : undefined;
      setState((s) => ({ ...s, messages: merge(s.messages, data.messages), nextBefore: data.nextBefore }));
    } catch (err) {
      setError(err);
    } finally {
      busy.current.older = false;
    }
  };

  /** Messages after the newest shown (one call at a time; a call asked for meanwhile runs after it). */
  const newer = async (follow) => {
    if (busy.current.newer) {
      busy.current.again = true;
      return;
    }
    busy.current.newer = true;
    try {
      do {
        busy.current.again = false;
        const { nextAfter } = current.current;
        const { data } = await api('GET', `${path}${query({ after: nextAfter ?? undefined, limit: HISTORY_PAGE })}`);
        // without a point, the call gave the newest page (oldest first): the chat was empty until now
        const el = pane.current;
        if (follow || (el && el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX)) scroll.current = 'bottom';
        setState((s) => ({ ...s, messages: merge(s.messages, data.messages), nextAfter: data.nextAfter ?? s.nextAfter, atEnd: nextAfter ? data.messages.length < HISTORY_PAGE : true }));
        current.current = { ...current.current, nextAfter: data.nextAfter ?? nextAfter };
      } while (busy.current.again);
    } catch (err) {
      setError(err);
    } finally {
      busy.current.newer = false;
    }
  };

  useLayoutEffect(() => {
    const el = pane.current;
    const want = scroll.current;
    if (!el || !want) return;
    scroll.current = undefined;
    if (want === 'bottom') el.scrollTop = el.scrollHeight;
    else if (want === 'focus') el.querySelector('.focused')?.scrollIntoView({ block: 'center' });
    else el.scrollTop = el.scrollHeight - want.keep;
  });

  useRefresh(() => (current.current.atEnd ? newer() : undefined));
  useEvents((event) => {
    if (event.session !== session || event.payload?.chatId !== chatId) return;
    const p = event.payload;
    if (MESSAGE_EVENTS.has(event.event)) {
      if (!current.current.atEnd) return;
      const el = pane.current;
      if (p.fromMe || (el && el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX)) scroll.current = 'bottom';
      // shown at once from the event, then as stored
      setState((s) => (s.messages.some((m) => m.messageId === p.messageId) ? s : { ...s, messages: merge(s.messages, [fromPayload(p)]) }));
      newer(p.fromMe);
      return;
    }
    const change = (edit) => setState((s) => ({ ...s, messages: s.messages.map((m) => (m.messageId === p.messageId ? { ...m, ...edit(m) } : m)) }));
    if (event.event === 'message.ack') change((m) => (STATUS_ORDER.indexOf(p.status) > STATUS_ORDER.indexOf(m.status) ? { status: p.status } : {}));
    else if (event.event === 'message.failed') change((m) => (m.status === 'delivered' || m.status === 'read' ? {} : { status: 'failed', failure: { reason: p.reason, ...(p.code ? { code: p.code } : {}) } }));
    else if (event.event === 'message.edited') change(() => ({ text: p.text, edited: true }));
    else if (event.event === 'message.revoked') change(() => ({ revoked: true, text: null }));
    else if (event.event === 'message.delete') setState((s) => ({ ...s, messages: s.messages.filter((m) => m.messageId !== p.messageId) }));
  });

  // whether the reader is at the newest message: a picture that loads then keeps it in view
  const atBottom = useRef(true);
  const onScroll = (event) => {
    const el = event.currentTarget;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
    if (el.scrollTop < NEAR_TOP_PX) older();
  };
  const onMediaLoad = () => {
    const el = pane.current;
    if (el && atBottom.current && !focus) el.scrollTop = el.scrollHeight;
  };

  const sent = (message) => {
    if (!current.current.atEnd) {
      location.hash = chatHref(session, chatId);
      return;
    }
    scroll.current = 'bottom';
    setState((s) => ({ ...s, messages: merge(s.messages, [message]) }));
    newer(true);
  };

  const title = chat ? chatName(chat) : formatChat(chatId);
  return html`<section class="history" aria-labelledby="h-chat">
    <div class="history-head">
      <a class="back" href=${chatHref(session)}>← Chats</a>
      <h2 id="h-chat" title=${chatId}>${title}</h2>
      ${chat?.phoneNumber && chat.phoneNumber !== title ? html`<span class="muted">${chat.phoneNumber}</span>` : null}
    </div>
    <${ErrorBox} error=${error} />
    <div class="messages" ref=${pane} onScroll=${onScroll} tabindex="0" role="region" aria-label=${`Messages with ${title}`}>
      ${state.nextBefore ? html`<p class="pager-line"><button type="button" onClick=${older}>Older messages</button></p>` : state.loaded && state.messages.length ? html`<p class="pager-line muted">The start of the stored history</p>` : null}
      ${state.loaded && state.messages.length === 0 ? html`<p class="muted">No stored messages in this chat.</p>` : null}
      ${!state.loaded && !error ? html`<p class="muted">Loading…</p>` : null}
      <ol class="bubbles" aria-live="polite">
        ${state.messages.map((m) => html`<${Message} key=${m.messageId} session=${session} message=${m} caps=${caps} focused=${m.messageId === focus} onMediaLoad=${onMediaLoad} />`)}
      </ol>
      ${state.atEnd ? null : html`<p class="pager-line"><button type="button" onClick=${() => newer()}>Newer messages</button></p>`}
    </div>
    ${caps.can('messages:send') ? html`<${Composer} session=${session} chatId=${chatId} onSent=${sent} />` : html`<p class="muted">Sending needs the <code>messages:send</code> scope.</p>`}
  </section>`;
}

function Composer({ session, chatId, onSent }) {
  const [text, setText] = useState('');
  const action = useAction();
  const send = async () => {
    if (!text.trim() || action.busy) return;
    const result = await action.run(async () => (await api('POST', `${base(session)}/messages/send`, { chatId, type: 'text', text })).data);
    if (!result) return;
    setText('');
    onSent({ messageId: result.messageId, chatId, fromMe: true, type: 'text', text, mediaId: null, status: result.status, revoked: false, edited: false, starred: false, timestamp: result.timestamp });
  };
  const keyDown = (event) => {
    // Enter sends; Shift+Enter starts a new line
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  };
  return html`<form class="composer" onSubmit=${(e) => (e.preventDefault(), send())}>
    <${Field} label="Message" hint="Enter sends, Shift+Enter starts a new line">
      <textarea name="message" rows="2" maxlength="65536" value=${text} onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${keyDown}></textarea>
    <//>
    <button type="submit" class="primary" disabled=${action.busy || !text.trim()}>Send</button>
    <${ErrorBox} error=${action.error} />
  </form>`;
}

function SessionPicker() {
  const sessions = useLoad(async () => (await api('GET', '/api/sessions')).data, []);
  return html`<h1>Conversations</h1>
    <${ErrorBox} error=${sessions.error} />
    ${sessions.value?.length === 0 ? html`<p>No sessions yet.</p>` : null}
    ${sessions.value?.length ? html`<p>Choose a session:</p>` : null}
    <ul class="session-picker">
      ${(sessions.value ?? []).map((s) => html`<li><a href=${chatHref(s.name)}>${s.name}</a> <span class="muted">${s.phoneNumber ?? s.status}</span></li>`)}
    </ul>`;
}

/** #/chats → choose a session; #/chats/{session}[/{chatId}[/{messageId}]] → its chats, a chat, a chat at a message. */
export function Conversations({ id, sub, rest, caps }) {
  if (!id) return html`<${SessionPicker} />`;
  return html`<${SessionConversations} session=${id} chatId=${sub} focus=${rest} caps=${caps} />`;
}

function SessionConversations({ session, chatId, focus, caps }) {
  const chats = useChats(session);
  const [search, setSearch] = useState();
  useEffect(() => setSearch(undefined), [session]);
  const names = new Map(chats.chats.map((c) => [c.chatId, chatName(c)]));
  const selected = chats.chats.find((c) => c.chatId === chatId);
  return html`<h1>Conversations <span class="muted h1-sub">session <a href="#/sessions/${enc(session)}">${session}</a></span></h1>
    <div class="conversations ${chatId ? 'has-chat' : ''}">
      <section class="chats" aria-labelledby="h-chats">
        <h2 id="h-chats" class="visually-hidden">Chats</h2>
        <${SearchForm} session=${session} onResults=${setSearch} />
        ${search
          ? html`<${SearchResults} session=${session} search=${search} names=${names} onClose=${() => setSearch(undefined)} />`
          : html`<${ErrorBox} error=${chats.error} />
              ${chats.loaded && chats.chats.length === 0 ? html`<p class="muted">No chats yet.</p>` : null}
              ${!chats.loaded && !chats.error ? html`<p class="muted">Loading…</p>` : null}
              <${ChatList} session=${session} chats=${chats} selected=${chatId} />
              ${chats.nextCursor ? html`<p class="pager-line"><button type="button" onClick=${chats.next} disabled=${chats.busy}>More chats</button></p>` : null}`}
      </section>
      ${chatId
        ? html`<${History} key=${`${session}/${chatId}/${focus ?? ''}`} session=${session} chat=${selected} chatId=${chatId} focus=${focus} caps=${caps} />`
        : html`<section class="history empty"><p class="muted">Choose a chat${search ? ' or a search result' : ''}.</p></section>`}
    </div>`;
}
