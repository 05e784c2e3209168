// Pairing a session: the QR drawn on a canvas and redrawn when it rotates (session.qr), a countdown to its expiry, and
// the pairing-code flow. The session page swaps this out for the account once session.status says CONNECTED.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { api } from '../api.js';
import { useEvents } from '../events.js';
import { ErrorBox, Field, useAction } from '../ui.js';

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

export function Pairing({ session }) {
  const [qr, setQr] = useState();
  const [error, setError] = useState();
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState();
  const action = useAction();
  const path = `/api/sessions/${encodeURIComponent(session.name)}`;
  const waiting = session.status === 'CONNECTING';

  useEffect(() => {
    if (!waiting) return;
    api('GET', `${path}/pairing/qr`)
      .then(({ data }) => (setQr(data), setError(undefined)))
      .catch((err) => (err.code === 'QR_NOT_AVAILABLE' ? setQr(undefined) : setError(err)));
  }, [session.name, waiting]);
  useEvents((event) => {
    if (event.session === session.name && event.event === 'session.qr') setQr(event.payload);
  });
  const seconds = useCountdown(qr?.expiresAt);

  const requestCode = (event) => {
    event.preventDefault();
    action.run(async () => setCode((await api('POST', `${path}/pairing/code`, { phoneNumber: phone.trim() })).data.code));
  };
  const start = () => action.run(() => api('POST', `${path}/start`));

  return html`<section class="card" aria-labelledby="h-pairing" data-testid="pairing">
    <h2 id="h-pairing">Pairing</h2>
    ${!waiting ? html`<p>The session is not running. Start it to get a QR code.</p><button type="button" class="primary" onClick=${start}>Start pairing</button>` : null}
    ${waiting && qr
      ? html`<div class="pairing">
          <${QrCanvas} text=${qr.qr} />
          <p aria-live="polite">Scan in WhatsApp → Settings → Linked devices. ${seconds !== undefined ? html`This code changes in <strong data-testid="countdown">${seconds}</strong> s.` : null}</p>
        </div>`
      : null}
    ${waiting && !qr && !error ? html`<p>Waiting for the QR code…</p>` : null}
    <${ErrorBox} error=${error} />
    <form onSubmit=${requestCode} class="form inline">
      <${Field} label="Or link with a phone number" hint="E.164, e.g. +15550001111"><input name="phoneNumber" type="tel" required value=${phone} onInput=${(e) => setPhone(e.currentTarget.value)} /><//>
      <button type="submit" disabled=${action.busy}>Get pairing code</button>
    </form>
    ${code ? html`<p>Enter this code on the phone: <strong class="code" data-testid="pairing-code">${code.slice(0, 4)}-${code.slice(4)}</strong></p>` : null}
    <${ErrorBox} error=${action.error} />
  </section>`;
}
