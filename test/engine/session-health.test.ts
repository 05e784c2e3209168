// Deaf sessions end to end, on both engines (the daemon as a child process, short watchdog times): the network stops
// sending anything while the connection stays open (the emulator's, or the sandbox's, silence fault); the watchdog's
// steps show as session.health events, the session recovers within the configured times, and messages flow again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector, type StreamedEvent } from '../helpers/events.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import type { EngineTarget } from './conformance.js';
import { startBaileysTarget, startSandboxTarget } from './targets.js';

const HEALTH = { silenceSeconds: 3, keepAliveSeconds: 1, probeTimeoutSeconds: 2, recoverSeconds: 20 };
const CONFIG = `sessions:\n  health:\n${Object.entries(HEALTH).map(([key, value]) => `    ${key}: ${value}\n`).join('')}`;
/** the longest the steps may take: the silence, a probe, then a reconnect and a restart with their probes, and a margin for a loaded machine */
const STEPS_MS = (HEALTH.silenceSeconds + HEALTH.keepAliveSeconds + 3 * HEALTH.probeTimeoutSeconds + 2 * HEALTH.recoverSeconds + 10) * 1000;
const PHONE = '15550108008';
const CONTACT = '15550109009';

const TARGETS: Array<[string, () => Promise<EngineTarget>]> = [
  ['sandbox', () => startSandboxTarget({ config: CONFIG })],
  ['baileys', () => startBaileysTarget({ config: CONFIG })],
];

for (const [engine, start] of TARGETS) {
  describe(`session health on ${engine}`, () => {
    let target: EngineTarget;
    let daemon: TestDaemon;
    let events: EventCollector;

    const view = async () => {
      const res = await daemon.request('GET', '/api/sessions/hana');
      assert.equal(res.status, 200);
      return res.body.data;
    };
    /** the session.health events of hana from the `from`th event of the stream on, as "state step reason" */
    const healthSteps = (from: number) =>
      events.events
        .slice(from)
        .filter((e) => e.session === 'hana' && e.event === 'session.health')
        .map((e) => `${e.payload.state} ${e.payload.step} ${e.payload.reason}`);
    const nextHealth = (from: number, state: string, step: string): Promise<StreamedEvent> =>
      events.next((e) => events.events.indexOf(e) >= from && e.session === 'hana' && e.event === 'session.health' && e.payload.state === state && e.payload.step === step, STEPS_MS, `session.health ${state} ${step}`);
    const messageFlows = async (text: string) => {
      await target.contactSends(CONTACT, 'hana', PHONE, text);
      await events.next((e) => e.session === 'hana' && e.event === 'message.received' && e.payload.text === text, 20_000, `"${text}" received`);
    };

    before(async () => {
      target = await start();
      daemon = target.daemon;
      events = await collectEvents(daemon);
      const created = await daemon.request('POST', '/api/sessions', { name: 'hana', start: true, engine });
      assert.equal(created.status, 201);
      const qr = await waitFor(async () => {
        const res = await daemon.request('GET', '/api/sessions/hana/pairing/qr');
        return res.status === 200 ? (res.body.data.qr as string) : undefined;
      }, 10_000, 'a QR code');
      await target.scanQr('hana', qr, PHONE);
      await waitFor(async () => (await view()).status === 'CONNECTED', 15_000, 'hana CONNECTED');
      await target.addContact(CONTACT);
    });

    after(async () => {
      events?.close();
      await target?.close();
    });

    it('a CONNECTED session that answers its keep-alives stays healthy', async () => {
      const first = await view();
      assert.equal(first.health, 'healthy');
      // more than a silence limit goes by: the keep-alive answers keep the last frame fresh
      await new Promise((resolve) => setTimeout(resolve, (HEALTH.silenceSeconds + 1) * 1000));
      const later = await view();
      assert.equal(later.health, 'healthy');
      assert.ok(Date.parse(later.lastFrameAt) > Date.parse(first.lastFrameAt), `the last frame moved on: ${first.lastFrameAt} → ${later.lastFrameAt}`);
      assert.deepEqual(healthSteps(0), []);
    });

    it('a session deaf until its next connection is probed, reconnected, and recovers; what came meanwhile arrives after the reconnect', async () => {
      const from = events.events.length;
      await target.silence('hana', PHONE, 'reconnect');
      const degraded = await nextHealth(from, 'degraded', 'probe');
      assert.equal(degraded.payload.reason, 'silence');
      // a contact writes while the session is deaf: the network holds the message
      await target.contactSends(CONTACT, 'hana', PHONE, 'while deaf');
      const recovered = await nextHealth(from, 'recovered', 'reconnect');
      assert.deepEqual(healthSteps(from), ['degraded probe silence', 'degraded reconnect probe_failed', 'recovered reconnect probe_failed']);
      assert.ok(Date.parse(recovered.payload.lastFrameAt) > Date.parse(degraded.payload.lastFrameAt), 'frames came again after the silence');
      const held = await events.next((e) => e.session === 'hana' && e.event === 'message.received' && e.payload.text === 'while deaf', 20_000, 'the message sent while deaf');
      const reconnecting = events.events.findIndex((e, i) => i >= from && e.session === 'hana' && e.event === 'session.health' && e.payload.step === 'reconnect');
      assert.ok(events.events.indexOf(held) > reconnecting, 'the message held during the silence came with the new connection');
      const current = await view();
      assert.equal(current.status, 'CONNECTED');
      assert.equal(current.health, 'healthy');
      await messageFlows('after the reconnect');
    });

    it('a session deaf across a reconnect is restarted, and recovers', async () => {
      const from = events.events.length;
      await target.silence('hana', PHONE, 'restart');
      await nextHealth(from, 'recovered', 'restart');
      assert.deepEqual(healthSteps(from), ['degraded probe silence', 'degraded reconnect probe_failed', 'degraded restart reconnect_failed', 'recovered restart reconnect_failed']);
      const current = await view();
      assert.equal(current.status, 'CONNECTED');
      assert.equal(current.health, 'healthy');
      await messageFlows('after the restart');
      const samples = await scrape(daemon.url, daemon.masterKey);
      assert.equal(valueOf(samples, 'gateway_session_health_transitions_total', { state: 'recovered', step: 'restart', reason: 'reconnect_failed' }), 1);
      assert.equal(valueOf(samples, 'gateway_session_health_transitions_total', { state: 'degraded', step: 'probe', reason: 'silence' }), 2);
      assert.equal(valueOf(samples, 'gateway_sessions_degraded'), 0);
    });
  });
}
