// A refused plain-http URL names the setting that would allow it, for its own kind of URL: media URLs have their own
// opt-in (media.allowPrivateUrls), which webhooks.allowPrivateTargets does not cover.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/errors.js';
import { checkTargetUrl } from '../../src/net/url-guard.js';

const refusal = (code: 'MEDIA_URL_REJECTED' | 'WEBHOOK_URL_REJECTED'): GatewayError => {
  try {
    checkTargetUrl('http://example.com/cat.jpg', { allowPrivateTargets: false }, code);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('the URL was accepted');
};

describe('the setting a URL refusal names', () => {
  test('MEDIA_URL_REJECTED names media.allowPrivateUrls, not the webhook setting', () => {
    const err = refusal('MEDIA_URL_REJECTED');
    assert.equal(err.code, 'MEDIA_URL_REJECTED');
    assert.match(err.message, /plain http is accepted only with media\.allowPrivateUrls/);
    assert.doesNotMatch(err.message, /webhooks|private targets/i);
  });

  test('WEBHOOK_URL_REJECTED names webhooks.allowPrivateTargets', () => {
    assert.match(refusal('WEBHOOK_URL_REJECTED').message, /plain http is accepted only with webhooks\.allowPrivateTargets/);
  });
});
