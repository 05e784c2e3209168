// Small building blocks every page uses: error boxes, confirmations, status badges, copyable secrets, data loading.
import { html } from 'htm/preact';
import { cloneElement, toChildArray } from 'preact';
import { useCallback, useEffect, useId, useState } from 'preact/hooks';

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

export function StatusBadge({ status, reason }) {
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

/** Loads data with `load()` on mount and whenever `deps` change; `reload()` loads again. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true });
  const run = useCallback(async () => {
    try {
      setState((s) => ({ ...s, loading: true }));
      setState({ loading: false, value: await load() });
    } catch (error) {
      setState({ loading: false, error });
    }
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run };
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

/** A table that scrolls sideways on a narrow screen (focusable, so the keyboard can scroll it). */
export function Table({ label, head, children }) {
  return html`<div class="table-wrap" role="region" aria-label=${label} tabindex="0">
    <table>
      <thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
      <tbody>${children}</tbody>
    </table>
  </div>`;
}

export const formatTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

export function formatDuration(seconds) {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${seconds % 60}s`;
}
