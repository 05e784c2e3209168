// The console overview's charts in one answer (GET /api/admin/activity): per minute over the last 15 minutes to an hour,
// messages received and sent and webhook deliveries that succeeded or failed for good, and each webhook's failures.
import type { ActivityRepo, MinuteCount } from '../store/activity.js';
import type { WebhookRegistry } from '../webhooks/registry.js';

export const ACTIVITY_WINDOWS = { '15m': 15, '30m': 30, '1h': 60 } as const;
export type ActivityWindow = keyof typeof ACTIVITY_WINDOWS;

/** webhooks listed at most (the API lists at most as many a page) */
const WEBHOOK_LIMIT = 1000;
const MINUTE_MS = 60_000;

export interface Activity {
  window: ActivityWindow;
  bucketSeconds: number;
  /** the first minute's start and the last minute's end (the current minute, still counting) */
  from: string;
  to: string;
  /** one count per minute, oldest first */
  messagesIn: number[];
  messagesOut: number[];
  deliveriesSucceeded: number[];
  deliveriesFailed: number[];
  totals: { messagesIn: number; messagesOut: number; deliveriesSucceeded: number; deliveriesFailed: number };
  /** every webhook (at most 1000, by id) with its deliveries that failed for good in the window */
  webhooks: Array<{ id: number; url: string; enabled: boolean; failed: number }>;
}

export async function recentActivity(repo: ActivityRepo, webhooks: Pick<WebhookRegistry, 'list'>, window: ActivityWindow, now = Date.now()): Promise<Activity> {
  const minutes = ACTIVITY_WINDOWS[window];
  const lastMinute = Math.floor(now / MINUTE_MS);
  const firstMinute = lastMinute - minutes + 1;
  const from = firstMinute * MINUTE_MS;
  const to = (lastMinute + 1) * MINUTE_MS;
  const series = (counts: MinuteCount[]) => {
    const out = new Array<number>(minutes).fill(0);
    for (const { minute, count } of counts) if (minute >= firstMinute && minute <= lastMinute) out[minute - firstMinute] = count;
    return out;
  };
  const [messages, deliveries, failedPerWebhook, listed] = await Promise.all([
    repo.messagesPerMinute(from, to),
    repo.deliveriesPerMinute(from, to),
    repo.failedPerWebhook(from, to),
    webhooks.list(WEBHOOK_LIMIT, 0),
  ]);
  const failedBy = new Map(failedPerWebhook.map((r) => [r.webhookId, r.count]));
  const result = {
    messagesIn: series(messages.in),
    messagesOut: series(messages.out),
    deliveriesSucceeded: series(deliveries.succeeded),
    deliveriesFailed: series(deliveries.failed),
  };
  const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);
  return {
    window,
    bucketSeconds: 60,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    ...result,
    totals: {
      messagesIn: sum(result.messagesIn),
      messagesOut: sum(result.messagesOut),
      deliveriesSucceeded: sum(result.deliveriesSucceeded),
      deliveriesFailed: sum(result.deliveriesFailed),
    },
    webhooks: listed.rows.map((w) => ({ id: w.id, url: w.url, enabled: w.enabled, failed: failedBy.get(w.id) ?? 0 })),
  };
}
