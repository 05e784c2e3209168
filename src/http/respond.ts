// Small helpers for handler results: the success/message body and list paging headers.
import type { AppContext } from './types.js';

export const done = (message: string) => ({ success: true, message });

/** Sets X-Total-Count and returns the page; list routes keep `data` an array. */
export function paged<T>(ctx: AppContext, items: T[], total: number): T[] {
  ctx.set('X-Total-Count', String(total));
  return items;
}
