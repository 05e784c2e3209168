// The console's shell: sign-in, the navigation (only what the key may use), a hash router, and the live event stream.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, capabilities, forgetKey, openEventStream, storedKey, storeKey, whenUnauthorized } from './api.js';
import { publish } from './events.js';
import { ErrorBox, Field } from './ui.js';
import { Overview } from './pages/overview.js';
import { Sessions } from './pages/sessions.js';
import { Session } from './pages/session.js';
import { Webhooks } from './pages/webhooks.js';
import { Webhook } from './pages/webhook.js';
import { Keys } from './pages/keys.js';
import { Settings } from './pages/settings.js';

/** #/sessions/demo → {page: 'sessions', id: 'demo'} */
function parseHash() {
  const [page = '', id] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { page, id };
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

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState();
  const submit = async (event) => {
    event.preventDefault();
    try {
      const { data } = await api('GET', '/api/account', undefined, key.trim());
      storeKey(key.trim());
      location.hash = '#/';
      onSignedIn(data);
    } catch (err) {
      setError(err);
    }
  };
  return html`<main id="main" class="signin">
    <h1>Session Gateway</h1>
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
  { page: 'webhooks', label: 'Webhooks', allowed: (caps) => caps.can('webhooks:manage') },
  { page: 'keys', label: 'API keys', allowed: (caps) => caps.can('keys:manage') },
  { page: 'settings', label: 'Settings', allowed: (caps) => caps.master },
];

function Shell({ account, onSignOut }) {
  const route = useRoute();
  const caps = capabilities(account);
  const [stream, setStream] = useState({ live: false });
  useEffect(() => {
    if (!caps.can('webhooks:manage')) {
      setStream({ live: false, unavailable: true });
      return undefined;
    }
    return openEventStream(publish, setStream);
  }, [account]);

  const props = { caps, stream, id: route.id };
  const views = { '': Overview, sessions: route.id ? Session : Sessions, webhooks: route.id ? Webhook : Webhooks, keys: Keys, settings: Settings };
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
        <span class="live ${stream.live ? 'on' : ''}" role="status">${stream.live ? 'live' : stream.unavailable ? 'no live updates' : 'offline'}</span>
        <span>${who}</span>
        <button type="button" onClick=${onSignOut}>Sign out</button>
      </span>
    </header>
    <main id="main" tabindex="-1">
      ${stream.unavailable ? html`<p class="notice">Live updates need the <code>webhooks:manage</code> scope; this key sees changes when a page is reloaded.</p>` : null}
      ${stream.error && !stream.unavailable ? html`<${ErrorBox} error=${stream.error} />` : null}
      ${View && entry?.allowed(caps) ? html`<${View} ...${props} />` : html`<h1>Not available</h1><p>This page does not exist or this key may not use it.</p>`}
    </main>
  </div>`;
}

function App() {
  const [account, setAccount] = useState();
  const [checking, setChecking] = useState(Boolean(storedKey()));
  const signOut = () => {
    forgetKey();
    history.replaceState(null, '', location.pathname);
    setAccount(undefined);
  };
  useEffect(() => {
    whenUnauthorized(signOut);
    if (!storedKey()) return;
    api('GET', '/api/account')
      .then(({ data }) => setAccount(data))
      .catch(() => forgetKey())
      .finally(() => setChecking(false));
  }, []);
  if (checking) return html`<main id="main"><p>Signing in…</p></main>`;
  if (!account) return html`<${SignIn} onSignedIn=${setAccount} />`;
  return html`<${Shell} account=${account} onSignOut=${signOut} />`;
}

render(html`<${App} />`, document.getElementById('app'));
