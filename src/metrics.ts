// Prometheus metrics (prom-client): process defaults plus the gateway's own gauges and counters.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  contentType: string;
  httpRequests: Counter<'method' | 'status'>;
  events: Counter<'event'>;
  webhookAttempts: Counter<'outcome'>;
  render(): Promise<string>;
}

export function createMetrics(sources: { sessionCounts(): { total: number; connected: number } }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  new Gauge({
    name: 'gateway_sessions',
    help: 'sessions by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { total, connected } = sources.sessionCounts();
      this.set({ state: 'total' }, total);
      this.set({ state: 'connected' }, connected);
    },
  });
  const httpRequests = new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'status'], registers: [registry] });
  const events = new Counter({ name: 'gateway_events_total', help: 'events recorded', labelNames: ['event'], registers: [registry] });
  const webhookAttempts = new Counter({
    name: 'gateway_webhook_attempts_total',
    help: 'webhook delivery attempts by outcome: succeeded, failed (retries exhausted), retry (another attempt scheduled)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  return { registry, contentType: registry.contentType, httpRequests, events, webhookAttempts, render: () => registry.metrics() };
}
