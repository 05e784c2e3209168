// Reconnect delays: capped exponential backoff with full jitter on the upper half.
export interface BackoffSettings {
  reconnectBaseMs: number;
  reconnectMaxMs: number;
}

export function reconnectDelayMs(settings: BackoffSettings, attempt: number, random = Math.random): number {
  const ceiling = Math.min(settings.reconnectMaxMs, settings.reconnectBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
