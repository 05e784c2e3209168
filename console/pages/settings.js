// Settings (master key): S3 storage, whose secret is write-only, and auto-persist of received media.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, ErrorBox, Field, Notice, useAction, useLoad } from '../ui.js';

const BLANK = { endpoint: '', region: 'us-east-1', bucket: '', accessKeyId: '', secretAccessKey: '', forcePathStyle: false, keyPrefix: '', publicBaseUrl: '', presignExpiresSeconds: 3600 };

export function Settings() {
  const settings = useLoad(async () => (await api('GET', '/api/admin/settings')).data, []);
  const [form, setForm] = useState(BLANK);
  const [autoPersist, setAutoPersist] = useState(false);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (!settings.value) return;
    setForm({ ...BLANK, ...(settings.value.s3 ?? {}), secretAccessKey: '' });
    setAutoPersist(settings.value.autoPersist);
  }, [settings.value]);
  const s3 = settings.value?.s3;
  const set = (field) => (event) => setForm({ ...form, [field]: event.currentTarget.type === 'checkbox' ? event.currentTarget.checked : event.currentTarget.value });
  const save = (body) =>
    action.run(async () => {
      setSaved(false);
      await api('PUT', '/api/admin/settings', body);
      setSaved(true);
      settings.reload();
    });
  const submit = (event) => {
    event.preventDefault();
    const { secretAccessKey, secretAccessKeySet, endpoint, publicBaseUrl, presignExpiresSeconds, ...rest } = form;
    const next = { ...rest, presignExpiresSeconds: Number(presignExpiresSeconds) };
    if (endpoint) next.endpoint = endpoint;
    if (publicBaseUrl) next.publicBaseUrl = publicBaseUrl;
    if (secretAccessKey) next.secretAccessKey = secretAccessKey;
    save({ s3: next, autoPersist });
  };
  return html`<h1>Settings</h1>
    <${ErrorBox} error=${settings.error || action.error} />
    ${saved ? html`<${Notice}>Settings saved.<//>` : null}
    <section class="card" aria-labelledby="h-s3">
      <h2 id="h-s3">S3 media storage</h2>
      ${settings.value === undefined ? (settings.error ? null : html`<p>Loading…</p>`) : html`<p>${s3 ? `Configured: bucket ${s3.bucket}.` : 'Not configured.'}</p>
      <form onSubmit=${submit} class="form">
        <${Field} label="Endpoint" hint="empty = AWS"><input name="endpoint" type="url" value=${form.endpoint} onInput=${set('endpoint')} /><//>
        <${Field} label="Region"><input name="region" value=${form.region} onInput=${set('region')} /><//>
        <${Field} label="Bucket"><input name="bucket" required value=${form.bucket} onInput=${set('bucket')} /><//>
        <${Field} label="Access key id"><input name="accessKeyId" required autocomplete="off" value=${form.accessKeyId} onInput=${set('accessKeyId')} /><//>
        <${Field} label="Secret access key" hint=${s3?.secretAccessKeySet ? 'set; it is never shown. Leave empty to keep it' : 'write-only: never shown again'}>
          <input name="secretAccessKey" type="password" autocomplete="new-password" required=${!s3?.secretAccessKeySet} value=${form.secretAccessKey} onInput=${set('secretAccessKey')} />
        <//>
        <${Field} label="Key prefix"><input name="keyPrefix" value=${form.keyPrefix} onInput=${set('keyPrefix')} /><//>
        <${Field} label="Public base URL" hint="empty = presigned URLs"><input name="publicBaseUrl" type="url" value=${form.publicBaseUrl} onInput=${set('publicBaseUrl')} /><//>
        <${Field} label="Presigned URL lifetime (s)"><input name="presignExpiresSeconds" type="number" min="1" value=${form.presignExpiresSeconds} onInput=${set('presignExpiresSeconds')} /><//>
        <label class="check"><input type="checkbox" name="forcePathStyle" checked=${form.forcePathStyle} onChange=${set('forcePathStyle')} /> Path-style URLs (MinIO)</label>
        <label class="check"><input type="checkbox" name="autoPersist" checked=${autoPersist} onChange=${(e) => setAutoPersist(e.currentTarget.checked)} /> Auto-persist received media to S3</label>
        <span class="actions">
          <button type="submit" class="primary" disabled=${action.busy}>Save S3 settings</button>
          ${s3 ? html`<${ConfirmButton} label="Remove S3" question="Remove the S3 settings?" onConfirm=${() => save({ s3: null, autoPersist: false })} />` : null}
        </span>
      </form>`}
    </section>`;
}
