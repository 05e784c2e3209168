// The console's shell: sign-in, the navigation (only what the key may use), a hash router (deep links survive sign-in;
// each page sets the title and takes the focus), the live event stream or, where it is refused, a poll, and the banner
// shown while the daemon does not answer.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, capabilities, forgetKey, storedKey, storeKey, whenUnauthorized } from './api.js';
import { requestRefresh, useReachable } from './connection.js';
import { publish } from './events.js';
import { openSharedEventStream } from './shared-stream.js';
import { ErrorBox, Field } from './ui.js';
import { Overview } from './pages/overview.js';
import { Sessions } from './pages/sessions.js';
import { Session } from './pages/session.js';
import { Conversations } from './pages/conversations.js';
import { Webhooks } from './pages/webhooks.js';
import { Webhook } from './pages/webhook.js';
import { Keys } from './pages/keys.js';
import { Settings } from './pages/settings.js';

/** #/sessions/demo → {page: 'sessions', id: 'demo'}; #/chats/demo/{chatId}/{messageId} → also {sub, rest} */
function parseHash() {
  const [page = '', id, sub, rest] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { page, id, sub, rest };
}

function useRoute() {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const onChange = () => setRoute(parseHash());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Without the event stream, views load again this often (while the tab is shown). */
const POLL_MS = 5000;
const TITLE = 'Session Gateway console';

function titleOf(route) {
  if (route.page === 'sessions' && route.id) return `Session ${route.id}`;
  if (route.page === 'webhooks' && route.id) return `Webhook ${route.id}`;
  if (route.page === 'chats' && route.id) return `Conversations ${route.id}`;
  return PAGES.find((p) => p.page === route.page)?.label ?? 'Not available';
}

function UnreachableBanner() {
  const reachable = useReachable();
  return reachable ? null : html`<p class="banner" role="alert" data-testid="unreachable">Daemon unreachable — retrying</p>`;
}

function SignIn({ onSignedIn, reason }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState();
  useEffect(() => {
    document.title = `Sign in · ${TITLE}`;
  }, []);
  const submit = async (event) => {
    event.preventDefault();
    try {
      const { data } = await api('GET', '/api/account', undefined, key.trim());
      storeKey(key.trim());
      // a deep link opened before signing in (#/sessions/demo) is where the console goes now
      if (!location.hash) location.hash = '#/';
      onSignedIn(data);
    } catch (err) {
      setError(err);
    }
  };
  return html`<main id="main" class="signin">
    <${UnreachableBanner} />
    <h1>Session Gateway</h1>
    ${reason ? html`<p class="notice" role="status" data-testid="signed-out-reason">${reason}</p>` : null}
    <form onSubmit=${submit}>
      <${Field} label="Master key or API key" hint="Kept in this tab only (sessionStorage), sent in the Authorization header.">
        <input type="password" name="key" autocomplete="off" required value=${key} onInput=${(e) => setKey(e.currentTarget.value)} />
      <//>
      <button type="submit" class="primary">Sign in</button>
    </form>
    <${ErrorBox} error=${error} />
  </main>`;
}

const PAGES = [
  { page: '', label: 'Overview', allowed: () => true },
  { page: 'sessions', label: 'Sessions', allowed: (caps) => caps.can('sessions:read') },
  { page: 'chats', label: 'Conversations', allowed: (caps) => caps.can('sessions:read') },
  { page: 'webhooks', label: 'Webhooks', allowed: (caps) => caps.can('webhooks:manage') },
  { page: 'keys', label: 'API keys', allowed: (caps) => caps.can('keys:manage') },
  { page: 'settings', label: 'Settings', allowed: (caps) => caps.master },
];

function Shell({ account, onSignOut }) {
  const route = useRoute();
  const caps = capabilities(account);
  const [stream, setStream] = useState({ live: false });
  const reachable = useReachable();
  useEffect(() => {
    if (!caps.can('webhooks:manage')) {
      setStream({ live: false, unavailable: true });
      return undefined;
    }
    return openSharedEventStream(publish, ({ refused, ...state }) => setStream(refused ? { live: false, unavailable: true } : state));
  }, [account]);
  // the event stream needs webhooks:manage: without it, every view loads again on a timer
  useEffect(() => {
    if (!stream.unavailable) return undefined;
    const timer = setInterval(() => document.hidden || requestRefresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [stream.unavailable]);
  // a new page: its title, and the focus on its content (skipped on the first page, where the browser starts)
  const main = useRef();
  const first = useRef(true);
  useEffect(() => {
    document.title = `${titleOf(route)} · ${TITLE}`;
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [route.page, route.id]);

  const props = { caps, stream, id: route.id, sub: route.sub, rest: route.rest };
  const views = { '': Overview, sessions: route.id ? Session : Sessions, chats: Conversations, webhooks: route.id ? Webhook : Webhooks, keys: Keys, settings: Settings };
  const entry = PAGES.find((p) => p.page === route.page);
  const View = views[route.page];
  const who = account.kind === 'master' ? 'master key' : `API key “${account.name}”`;
  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>Skip to content</a>
    <header>
      <span class="brand">Session Gateway</span>
      <nav aria-label="Main">
        <ul>${PAGES.filter((p) => p.allowed(caps)).map((p) => html`<li><a href="#/${p.page}" aria-current=${route.page === p.page ? 'page' : undefined}>${p.label}</a></li>`)}</ul>
      </nav>
      <span class="who">
        <span class="live ${stream.live && reachable ? 'on' : ''}" role="status">${!reachable ? 'offline' : stream.live ? 'live' : stream.unavailable ? 'polling' : 'offline'}</span>
        <span>${who}</span>
        <button type="button" onClick=${onSignOut}>Sign out</button>
      </span>
    </header>
    <${UnreachableBanner} />
    <main id="main" tabindex="-1" ref=${main}>
      ${stream.unavailable ? html`<p class="notice">Live updates need the <code>webhooks:manage</code> scope; this key's pages load again every ${POLL_MS / 1000} s instead.</p>` : null}
      ${stream.error && !stream.unavailable && reachable ? html`<${ErrorBox} error=${stream.error} />` : null}
      ${View && entry?.allowed(caps) ? html`<${View} ...${props} />` : html`<h1>Not available</h1><p>This page does not exist or this key may not use it.</p>`}
    </main>
  </div>`;
}

function App() {
  const [account, setAccount] = useState();
  const [checking, setChecking] = useState(Boolean(storedKey()));
  const [reason, setReason] = useState();
  // signing out by hand leaves the page it was on; the key refused (401) keeps it, to return there after signing in
  const signOut = (why) => {
    forgetKey();
    if (!why) history.replaceState(null, '', location.pathname);
    setReason(why);
    setAccount(undefined);
    setChecking(false);
  };
  useEffect(() => {
    whenUnauthorized(signOut);
    if (!storedKey()) return undefined;
    let stopped = false;
    // a daemon that is down when the tab opens is asked again until it answers (the key is kept meanwhile)
    const check = () =>
      api('GET', '/api/account')
        .then(({ data }) => (setAccount(data), setChecking(false)))
        .catch((err) => {
          if (stopped) return;
          if (err.status === 0 || err.status >= 500) setTimeout(check, 2000);
          else if (err.status !== 401) signOut(err.message);
        });
    check();
    return () => (stopped = true);
  }, []);
  if (checking) return html`<main id="main"><${UnreachableBanner} /><h1>Session Gateway</h1><p>Signing in…</p></main>`;
  if (!account) return html`<${SignIn} reason=${reason} onSignedIn=${(data) => (setReason(undefined), setAccount(data))} />`;
  return html`<${Shell} account=${account} onSignOut=${() => signOut()} />`;
}

render(html`<${App} />`, document.getElementById('app'));
