// Small building blocks every page uses: error boxes, confirmations, status badges, copyable secrets, data loading.
import { html } from 'htm/preact';
import { cloneElement, toChildArray } from 'preact';
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useReachable, useRefresh } from './connection.js';

/** An API error shown plainly: its code and the API's own message (a 403 says what the key lacks). */
export function ErrorBox({ error }) {
  if (!error) return null;
  const title = error.status === 403 ? 'Not allowed' : 'Error';
  return html`<p class="error" role="alert"><strong>${title}:</strong> <code>${error.code}</code> ${error.message}</p>`;
}

export function Notice({ children }) {
  return html`<p class="notice" role="status">${children}</p>`;
}

/** A button that asks before it acts ("Delete" → "Delete demo? Yes / Cancel"). */
export function ConfirmButton({ label, question, onConfirm, danger = true }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return html`<button type="button" class=${danger ? 'danger' : ''} onClick=${() => setAsking(true)}>${label}</button>`;
  return html`<span class="confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" onClick=${() => (setAsking(false), onConfirm())}>Yes, ${label.toLowerCase()}</button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

/** A session's status as last read, or `unknown` while the daemon does not answer (it may have changed since). */
export function useShownStatus(status) {
  return useReachable() ? status : 'unknown';
}

export function StatusBadge({ status: known, reason }) {
  const status = useShownStatus(known);
  if (status === 'unknown') return html`<span class="badge unknown" data-status="unknown" title=${`last seen ${known}`}>unknown</span>`;
  const tone = status === 'CONNECTED' ? 'ok' : status === 'CONNECTING' ? 'wait' : 'off';
  return html`<span class="badge ${tone}" data-status=${status}>${status}${reason ? ` · ${reason}` : ''}</span>`;
}

/** A secret shown once, with a copy button. */
export function Secret({ label, value }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<div class="secret">
    <p><strong>${label}</strong> (shown once: store it now)</p>
    <code class="secret-value">${value}</code>
    <button type="button" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
  </div>`;
}

/**
 * Loads data with `load()` on mount and whenever `deps` change; `reload()` loads again, and so does every refresh request
 * (the daemon came back, the event stream reopened, or the poll that replaces a refused stream). A failed reload keeps
 * the value last loaded next to the error; a reload that brings the same data keeps the same object, so effects that
 * copy it into a form do not run again and wipe what is being typed.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true });
  const latest = useRef(0);
  const run = useCallback(async () => {
    const call = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const value = await load();
      if (call !== latest.current) return;
      setState((s) => ({ loading: false, value: sameData(s.value, value) ? s.value : value }));
    } catch (error) {
      if (call !== latest.current) return;
      setState((s) => ({ loading: false, value: s.value, error }));
    }
  }, deps);
  useEffect(() => {
    setState({ loading: true });
    run();
  }, [run]);
  useRefresh(run);
  return { ...state, reload: run };
}

function sameData(a, b) {
  if (a === undefined || b === undefined) return a === b;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/** Runs an action, keeping its error (shown by ErrorBox) and a busy flag. */
export function useAction() {
  const [state, setState] = useState({ busy: false });
  const run = async (action) => {
    setState({ busy: true });
    try {
      const result = await action();
      setState({ busy: false });
      return result;
    } catch (error) {
      setState({ busy: false, error });
      return undefined;
    }
  };
  return { ...state, run, clear: () => setState({ busy: false }) };
}

/** A labelled form control: `children` is the one input, `hint` a line under it that describes it. */
export function Field({ label, hint, children }) {
  const id = useId();
  const control = cloneElement(toChildArray(children)[0], { id, 'aria-describedby': hint ? `${id}-hint` : undefined });
  return html`<div class="field"><label class="label" for=${id}>${label}</label>${control}${hint ? html`<small id=${`${id}-hint`}>${hint}</small>` : null}</div>`;
}

/**
 * A table. Wide screens see columns; under 640 px each row becomes a card of "label: value" lines (style.css), so each
 * cell carries its column's label (`data-label`, from `head`). A head entry is a string (an empty one is an "Actions"
 * column, its heading read aloud but not shown), or {label, hidden}; a cell spanning columns (colspan) gets no label.
 */
export function Table({ label, head, children }) {
  const body = useRef();
  const columns = head.map((h) => (typeof h === 'string' ? (h ? { label: h } : { label: 'Actions', hidden: true }) : h));
  useLayoutEffect(() => {
    // explicit roles: a row shown as a card (display: block) stays a table row to assistive technology
    for (const row of body.current?.rows ?? []) {
      row.setAttribute('role', 'row');
      [...row.cells].forEach((cell, index) => {
        cell.setAttribute('role', 'cell');
        const column = cell.colSpan > 1 ? undefined : columns[index];
        if (column && !column.hidden) cell.setAttribute('data-label', column.label);
        else cell.removeAttribute('data-label');
      });
    }
  });
  return html`<div class="table-wrap" role="region" aria-label=${`${label} table`} tabindex="0">
    <table class="responsive" role="table">
      <thead role="rowgroup">
        <tr role="row">${columns.map((c) => html`<th scope="col" role="columnheader">${c.hidden ? html`<span class="visually-hidden">${c.label}</span>` : c.label}</th>`)}</tr>
      </thead>
      <tbody role="rowgroup" ref=${body}>${children}</tbody>
    </table>
  </div>`;
}

/** "Nov 27, 2026, 3:15:33 PM UTC": the reader's local time with its zone named. */
export const formatTime = (iso) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'long' }) : '—');

/** A chat as a person reads it: +15550001111 for a phone JID, "group …", "channel …"; the raw JID stays in the title. */
export function formatChat(jid) {
  if (!jid) return '—';
  const [user, server] = jid.split('@');
  const id = (user ?? '').split(':')[0];
  if (server === 's.whatsapp.net' || server === 'c.us') return `+${id}`;
  if (server === 'g.us') return `group ${id}`;
  if (server === 'newsletter') return `channel ${id}`;
  if (server === 'lid') return `LID ${id}`;
  if (jid === 'status@broadcast') return 'status updates';
  return jid;
}

/** A chat by name when the contacts know it ("Alice (+15550001111)"), else as formatChat shows it. */
export function Chat({ jid, name }) {
  const shown = formatChat(jid);
  return html`<span title=${jid}>${name && name !== shown ? `${name} (${shown})` : shown}</span>`;
}

export function formatDuration(seconds) {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${seconds % 60}s`;
}
