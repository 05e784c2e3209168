import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskProxy } from '../../src/sessions/view.js';

test('maskProxy hides every part of a proxy URL that can carry a credential', () => {
  assert.equal(maskProxy('socks5://user:secret@proxy.example.com:1080'), 'socks5://user:***@proxy.example.com:1080');
  assert.equal(maskProxy('http://tok_abcdef@proxy.example.com:8080'), 'http://***@proxy.example.com:8080');
  assert.equal(maskProxy('http://proxy.example.com:8080/?token=abc&x=1'), 'http://proxy.example.com:8080/?token=***&x=***');
  assert.equal(maskProxy('http://proxy.example.com:8080'), 'http://proxy.example.com:8080');
  assert.equal(maskProxy('not a url with secret'), '***');
});
