// Health at a glance: the daemon, sessions by state, and for the master key the last hour's activity as small charts
// (GET /api/admin/activity), the status report's findings (GET /api/admin/status) and each webhook's failures linking
// to its delivery log. A constant number of requests, however many webhooks there are.
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import { api } from '../api.js';
import { useEvents } from '../events.js';
import { ErrorBox, formatDuration, Table, useLoad } from '../ui.js';

/** the charts and findings are read again this often while the page is open */
const REFRESH_MS = 60_000;
/** a backlog whose oldest delivery waits this long is a finding (gateway doctor's default) */
const BACKLOG_AGE_SECONDS = 300;

const SERIES = [
  { key: 'messagesIn', title: 'Messages in', tone: 'in' },
  { key: 'messagesOut', title: 'Messages out', tone: 'out' },
  { key: 'deliveriesSucceeded', title: 'Deliveries succeeded', tone: 'ok' },
  { key: 'deliveriesFailed', title: 'Deliveries failed', tone: 'off' },
];

const clock = (ms) => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
const secondsSince = (iso) => Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));

/** One series as bars, one a minute, oldest left; the text alternative says the total, the peak and its minute. */
export function MinuteBars({ title, tone, counts, from }) {
  const width = 4;
  const height = 40;
  const peak = Math.max(0, ...counts);
  const total = counts.reduce((sum, n) => sum + n, 0);
  const peakAt = from + counts.indexOf(peak) * 60_000;
  const minutes = counts.length;
  const summary = total
    ? `${title}: ${total} in the last ${minutes} minutes, at most ${peak} a minute (${clock(peakAt)})`
    : `${title}: none in the last ${minutes} minutes`;
  return html`<figure class="chart" data-series=${tone}>
    <figcaption><span>${title}</span> <strong data-testid=${`total-${tone}`}>${total}</strong></figcaption>
    <svg class="bars ${tone}" role="img" aria-label=${summary} viewBox=${`0 0 ${minutes * width} ${height}`} preserveAspectRatio="none">
      <line class="axis" x1="0" y1=${height - 0.5} x2=${minutes * width} y2=${height - 0.5} />
      ${counts.map((count, i) => {
        if (!count) return null;
        const h = Math.max(2, (count / peak) * (height - 2));
        return html`<rect x=${i * width + 0.5} y=${height - h} width=${width - 1} height=${h} />`;
      })}
    </svg>
    <div class="chart-axis" aria-hidden="true"><span>${clock(from)}</span><span>now</span></div>
  </figure>`;
}

/** What the status report says needs a look, worded as `gateway doctor` does; each with a link to where to act. */
export function findingsOf(status) {
  const findings = [];
  for (const s of status.sessions.attention) {
    findings.push({
      key: `session-${s.name}`,
      text: `Session ${s.name} is ${s.status}${s.statusReason ? ` (${s.statusReason})` : ''} for ${formatDuration(secondsSince(s.since))}`,
      href: `#/sessions/${encodeURIComponent(s.name)}`,
    });
  }
  for (const w of status.webhooks.failing) {
    findings.push({
      key: `webhook-${w.id}`,
      text: `Webhook ${w.id} (${w.url}) failing for ${formatDuration(secondsSince(w.since))}: ${w.deliveries} deliveries, last ${w.lastStatusCode ?? w.lastError ?? 'no answer'}`,
      href: `#/webhooks/${w.id}/failed`,
    });
  }
  if (status.webhooks.oldestPendingAt && secondsSince(status.webhooks.oldestPendingAt) >= BACKLOG_AGE_SECONDS) {
    findings.push({
      key: 'backlog',
      text: `${status.webhooks.pendingDeliveries} webhook deliveries pending, the oldest for ${formatDuration(secondsSince(status.webhooks.oldestPendingAt))}`,
    });
  }
  if (status.s3.configured && !status.s3.reachable) findings.push({ key: 's3', text: `The S3 storage does not answer: ${status.s3.error ?? 'unknown error'}`, href: '#/settings' });
  if (!status.backups.last) findings.push({ key: 'backups', text: `No backup yet (backup.schedule: ${status.backups.schedule}); take one with gateway backup` });
  return findings;
}

function Findings({ status }) {
  const findings = findingsOf(status);
  return html`<section class="card" aria-labelledby="h-findings">
    <h2 id="h-findings">Findings</h2>
    ${findings.length
      ? html`<ul class="findings">
          ${findings.map((f) => html`<li data-finding=${f.key}>${f.href ? html`<a href=${f.href}>${f.text}</a>` : f.text}</li>`)}
        </ul>`
      : html`<p data-finding="none">Nothing needs a look: sessions, webhooks, S3 and backups are fine.</p>`}
    <dl>
      <dt>Pending deliveries</dt><dd data-testid="pending">${status.webhooks.pendingDeliveries}</dd>
      <dt>Database</dt><dd>schema ${status.schemaVersion}${status.database.sizeBytes ? `, ${Math.round(status.database.sizeBytes / 1024 / 1024)} MB` : ''}</dd>
    </dl>
  </section>`;
}

function Activity({ activity }) {
  const from = Date.parse(activity.from);
  return html`<section class="card wide" aria-labelledby="h-activity">
    <h2 id="h-activity">Last ${activity.window === '1h' ? 'hour' : activity.window}, per minute</h2>
    <div class="charts">
      ${SERIES.map((s) => html`<${MinuteBars} title=${s.title} tone=${s.tone} counts=${activity[s.key]} from=${from} />`)}
    </div>
  </section>`;
}

function WebhookFailures({ webhooks }) {
  return html`<section class="card wide" aria-labelledby="h-webhooks">
    <h2 id="h-webhooks">Webhooks</h2>
    ${webhooks.length === 0
      ? html`<p>No webhooks yet.</p>`
      : html`<${Table} label="Webhook failures" head=${['Webhook', 'Enabled', 'Failed in the last hour']}>
          ${webhooks.map(
            (w) => html`<tr data-webhook=${w.id}>
              <td><a href="#/webhooks/${w.id}">${w.url}</a></td>
              <td>${w.enabled ? 'yes' : 'no'}</td>
              <td>${w.failed ? html`<a href="#/webhooks/${w.id}/failed" data-failed=${w.failed}>${w.failed} failed</a>` : html`<span data-failed="0">0</span>`}</td>
            </tr>`,
          )}
        <//>`}
  </section>`;
}

export function Overview({ caps }) {
  const health = useLoad(async () => (await api('GET', '/api/health')).data, []);
  const sessions = useLoad(async () => (caps.can('sessions:read') ? (await api('GET', '/api/sessions')).data : undefined), []);
  const status = useLoad(async () => (caps.master ? (await api('GET', '/api/admin/status')).data : undefined), []);
  const activity = useLoad(async () => (caps.master ? (await api('GET', '/api/admin/activity?window=1h')).data : undefined), []);
  useEvents((event) => {
    if (event.event === 'session.status') sessions.reload();
  });
  useEffect(() => {
    if (!caps.master) return undefined;
    const timer = setInterval(() => (status.reload(), activity.reload()), REFRESH_MS);
    return () => clearInterval(timer);
  }, [status.reload, activity.reload]);

  const byState = {};
  for (const session of sessions.value ?? []) byState[session.status] = (byState[session.status] ?? 0) + 1;
  const h = health.value;
  return html`<h1>Overview</h1>
    <${ErrorBox} error=${health.error || sessions.error || status.error || activity.error} />
    <div class="cards">
      <section class="card" aria-labelledby="h-daemon">
        <h2 id="h-daemon">Daemon</h2>
        ${h
          ? html`<dl>
              <dt>Status</dt><dd>${h.status}</dd>
              <dt>Version</dt><dd data-testid="version">${h.version}</dd>
              <dt>Uptime</dt><dd>${formatDuration(h.uptime)}</dd>
            </dl>`
          : html`<p>Loading…</p>`}
      </section>
      <section class="card" aria-labelledby="h-sessions">
        <h2 id="h-sessions">Sessions</h2>
        ${sessions.value
          ? html`<dl>
              <dt>Total</dt><dd>${sessions.value.length}</dd>
              ${['CONNECTED', 'CONNECTING', 'DISCONNECTED'].map((state) => html`<dt>${state}</dt><dd data-state=${state}>${byState[state] ?? 0}</dd>`)}
            </dl>`
          : h
            ? html`<dl><dt>Total</dt><dd>${h.sessions.total}</dd><dt>Connected</dt><dd>${h.sessions.connected}</dd></dl>`
            : null}
      </section>
      ${status.value ? html`<${Findings} status=${status.value} />` : null}
      ${activity.value ? html`<${Activity} activity=${activity.value} />` : null}
      ${activity.value ? html`<${WebhookFailures} webhooks=${activity.value.webhooks} />` : null}
    </div>
    ${caps.master ? null : html`<p class="notice">The activity charts, the status report's findings and webhook failures need the master key.</p>`}`;
}
