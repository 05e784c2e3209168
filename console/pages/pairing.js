// Pairing a session: the QR drawn on a canvas and redrawn when it rotates (session.qr, or the QR route loaded again
// where the event stream is refused), a countdown to its expiry, and the pairing-code flow; a sandbox session has no
// phone to scan with, so the master key gets "Simulate scan" (the sandbox's pair route). The session page swaps this out
// for the account once session.status says CONNECTED.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { api } from '../api.js';
import { useEvents } from '../events.js';
import { ErrorBox, Field, useAction, useLoad } from '../ui.js';

function useCountdown(expiresAt) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!expiresAt) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [expiresAt]);
  return expiresAt ? Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000)) : undefined;
}

function QrCanvas({ text }) {
  const canvas = useRef();
  useEffect(() => {
    if (canvas.current && text) QRCode.toCanvas(canvas.current, text, { width: 264, margin: 2, errorCorrectionLevel: 'L' });
  }, [text]);
  return html`<canvas ref=${canvas} class="qr" role="img" aria-label="Pairing QR code: scan it in WhatsApp, Linked devices" data-qr=${text}></canvas>`;
}

export function Pairing({ session, master, onChange }) {
  const [liveQr, setLiveQr] = useState();
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState();
  const action = useAction();
  const path = `/api/sessions/${encodeURIComponent(session.name)}`;
  const waiting = session.status === 'CONNECTING';
  const sandbox = session.engine === 'sandbox';

  // 409 QR_NOT_AVAILABLE: no QR yet (the session is still reaching the pairing step); the next event or poll brings it
  const loaded = useLoad(async () => {
    if (!waiting) return null;
    try {
      return (await api('GET', `${path}/pairing/qr`)).data;
    } catch (err) {
      if (err.code === 'QR_NOT_AVAILABLE') return null;
      throw err;
    }
  }, [session.name, waiting]);
  useEffect(() => setLiveQr(undefined), [loaded.value]);
  useEvents((event) => {
    if (event.session === session.name && event.event === 'session.qr') setLiveQr(event.payload);
  });
  const qr = waiting ? (liveQr ?? loaded.value) : undefined;
  const seconds = useCountdown(qr?.expiresAt);

  const requestCode = (event) => {
    event.preventDefault();
    action.run(async () => setCode((await api('POST', `${path}/pairing/code`, { phoneNumber: phone.trim() })).data.code));
  };
  const start = () => action.run(async () => (await api('POST', `${path}/start`), onChange?.()));
  const simulateScan = () => action.run(async () => (await api('POST', `/api/sandbox/sessions/${encodeURIComponent(session.name)}/pair`, phone.trim() ? { phoneNumber: phone.trim() } : {}), onChange?.()));

  return html`<section class="card" aria-labelledby="h-pairing" data-testid="pairing">
    <h2 id="h-pairing">Pairing</h2>
    ${!waiting ? html`<p>The session is not running. Start it to get a QR code.</p><button type="button" class="primary" onClick=${start} disabled=${action.busy}>Start pairing</button>` : null}
    ${waiting && qr
      ? html`<div class="pairing">
          <${QrCanvas} text=${qr.qr} />
          <p aria-live="polite">
            ${sandbox ? 'A sandbox session: no phone can scan this code; simulate the scan instead. ' : 'Scan in WhatsApp → Settings → Linked devices. '}
            ${seconds !== undefined ? html`This code changes in <strong data-testid="countdown">${seconds}</strong> s.` : null}
          </p>
        </div>`
      : null}
    ${waiting && !qr && !loaded.error ? html`<p>Waiting for the QR code…</p>` : null}
    ${waiting && sandbox && master ? html`<p><button type="button" class="primary" onClick=${simulateScan} disabled=${action.busy}>Simulate scan</button> <small>the sandbox's phone links this session${phone.trim() ? ` as ${phone.trim()}` : ''}</small></p>` : null}
    <${ErrorBox} error=${loaded.error} />
    <form onSubmit=${requestCode} class="form inline">
      <${Field} label="Or link with a phone number" hint="E.164, e.g. +15550001111"><input name="phoneNumber" type="tel" required value=${phone} onInput=${(e) => setPhone(e.currentTarget.value)} /><//>
      <button type="submit" disabled=${action.busy}>Get pairing code</button>
    </form>
    ${code ? html`<p>Enter this code on the phone: <strong class="code" data-testid="pairing-code">${code.slice(0, 4)}-${code.slice(4)}</strong></p>` : null}
    <${ErrorBox} error=${action.error} />
  </section>`;
}
