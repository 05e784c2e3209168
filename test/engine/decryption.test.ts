// Decryption health pieces on their own: the kinds Baileys' errors map to, the watch that turns an unrecovered failure
// into message.undecryptable (fake timers), and the per-session counters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UndecryptableWatch, type DecryptionSignal } from '../../src/engine/decryption.js';
import { failureKind } from '../../src/engine/baileys/decryption.js';
import { DecryptionCounters } from '../../src/sessions/decryption-counters.js';

describe('decryption failure kinds (Baileys rc14 and libsignal error texts)', () => {
  const cases: Array<[string, string]> = [
    ['Bad MAC', 'bad_mac'],
    ['No matching sessions found for message', 'bad_mac'],
    ['InvalidMessageException', 'bad_mac'],
    ['No session record', 'no_session'],
    ['No SenderKeyRecord found for decryption', 'no_session'],
    ['Invalid PreKey ID', 'invalid_prekey'],
    ['Missing SignedPreKey', 'invalid_prekey'],
    ['Key used already or never filled', 'spent_key'],
    ['Received message with old counter: 5, 3', 'spent_key'],
    ['Message absent from node', 'absent'],
    ['Unknown e2e type: frank', 'other'],
    ['', 'other'],
  ];
  for (const [error, kind] of cases) it(`${JSON.stringify(error)} → ${kind}`, () => assert.equal(failureKind(error), kind));
});

describe('UndecryptableWatch', () => {
  const sender = { jid: '15550001234@s.whatsapp.net', phoneNumber: '+15550001234' };
  const failed = (messageId: string) => ({ messageId, chatId: sender.jid, sender, kind: 'bad_mac' as const });
  const watchWith = (giveUpMs = 1_000) => {
    const signals: DecryptionSignal[] = [];
    const reported: Array<Record<string, unknown>> = [];
    const watch = new UndecryptableWatch(giveUpMs, { signal: (s) => signals.push(s), undecryptable: (p) => reported.push(p) });
    return { watch, signals, reported };
  };

  it('reports a failure nobody recovered once the give-up time passed, with its retries', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { watch, signals, reported } = watchWith();
    watch.failed(failed('A'));
    watch.retried('A');
    watch.retried('A');
    t.mock.timers.tick(999);
    assert.equal(reported.length, 0);
    t.mock.timers.tick(1);
    assert.equal(reported.length, 1);
    assert.deepEqual({ ...reported[0], timestamp: undefined }, { messageId: 'A', chatId: sender.jid, sender, kind: 'bad_mac', retries: 2, timestamp: undefined });
    assert.deepEqual(signals, [
      { kind: 'failure', failure: 'bad_mac' },
      { kind: 'retry_receipt', direction: 'sent' },
      { kind: 'retry_receipt', direction: 'sent' },
      { kind: 'exhausted', direction: 'incoming' },
    ]);
  });

  it('counts a retry receipt that left before the failure was followed (the store check is a round trip on PostgreSQL)', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { watch, reported } = watchWith();
    watch.retried('E');
    watch.failed(failed('E'));
    t.mock.timers.tick(1000);
    assert.equal(reported[0]?.retries, 1);
  });

  it('reports nothing for a message a decrypted copy recovered, and does not count a later failure of it again', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { watch, signals, reported } = watchWith();
    watch.failed(failed('B'));
    watch.recovered('B');
    watch.failed(failed('B'));
    t.mock.timers.tick(5_000);
    assert.deepEqual(reported, []);
    assert.deepEqual(signals, [{ kind: 'failure', failure: 'bad_mac' }]);
  });

  it('reports at once when the engine exhausted its retries, and only once', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { watch, reported } = watchWith();
    watch.failed(failed('C'));
    watch.exhausted('C');
    assert.equal(reported.length, 1);
    watch.exhausted('C');
    t.mock.timers.tick(5_000);
    assert.equal(reported.length, 1);
  });

  it('counts a message failing twice (a re-sent copy failing again) once', () => {
    const { watch, signals } = watchWith();
    watch.failed(failed('D'));
    watch.failed({ ...failed('D'), kind: 'no_session' });
    watch.close();
    assert.deepEqual(signals, [{ kind: 'failure', failure: 'bad_mac' }]);
  });

  it('close stops following without reporting', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { watch, reported } = watchWith();
    watch.failed(failed('E'));
    watch.close();
    t.mock.timers.tick(5_000);
    assert.deepEqual(reported, []);
  });
});

describe('DecryptionCounters', () => {
  it('counts each signal of a session, starts at zero and forgets a deleted session', () => {
    const counters = new DecryptionCounters();
    assert.equal(counters.of('s1'), undefined);
    counters.open('s1');
    assert.deepEqual({ ...counters.of('s1'), since: undefined }, {
      retryReceiptsSent: 0,
      retryReceiptsReceived: 0,
      failures: { bad_mac: 0, no_session: 0, invalid_prekey: 0, spent_key: 0, absent: 0, other: 0 },
      retriesExhausted: { incoming: 0, outgoing: 0 },
      since: undefined,
    });
    counters.record('s1', { kind: 'retry_receipt', direction: 'sent' });
    counters.record('s1', { kind: 'retry_receipt', direction: 'received' });
    counters.record('s1', { kind: 'retry_receipt', direction: 'received' });
    counters.record('s1', { kind: 'failure', failure: 'spent_key' });
    counters.record('s1', { kind: 'exhausted', direction: 'outgoing' });
    counters.record('s2', { kind: 'exhausted', direction: 'incoming' });
    const s1 = counters.of('s1')!;
    assert.equal(s1.retryReceiptsSent, 1);
    assert.equal(s1.retryReceiptsReceived, 2);
    assert.equal(s1.failures.spent_key, 1);
    assert.deepEqual(s1.retriesExhausted, { incoming: 0, outgoing: 1 });
    assert.deepEqual(counters.of('s2')!.retriesExhausted, { incoming: 1, outgoing: 0 });
    // a copy: changing it changes nothing
    s1.failures.bad_mac = 99;
    assert.equal(counters.of('s1')!.failures.bad_mac, 0);
    counters.forget('s1');
    assert.equal(counters.of('s1'), undefined);
  });
});

