// ISO-8601 timestamps of the current time for events and messages. Date#toISOString formats through snprintf in V8
// (about 7,000 instructions a call, several calls per send): here the part up to the second is formatted once a second.
let formattedSecond = NaN;
let secondPrefix = '';

/** `new Date(ms).toISOString()`, for an integer `ms` (the default: now) between 1970 and 9999. */
export function isoTimestamp(ms: number = Date.now()): string {
  const second = Math.floor(ms / 1000);
  if (second !== formattedSecond) {
    formattedSecond = second;
    secondPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const milli = ms - second * 1000;
  return `${secondPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

export const DAY_MS = 86_400_000;

/** the start (ms) of the UTC day of `now` */
export function utcDayStart(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

/** seconds from `now` to the next UTC midnight (when daily caps start again) */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((utcDayStart(now) + DAY_MS - now) / 1000));
}
