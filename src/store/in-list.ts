// A query over a list of values (`IN (…)`), prepared once per power-of-two length: the list is padded with its first
// value, so a few prepared statements serve every length, and a repeated value changes no answer.
import type { Db, Statement } from './db.js';

/** `sqlWith(placeholders)` is the query with `?, ?, …` where the list goes */
export function inListQuery<Row>(db: Db, sqlWith: (placeholders: string) => string) {
  const bySize = new Map<number, Statement<Row>>();
  /** the rows for `values` (at least one), after the parameters that come `before` the list */
  return async (before: readonly unknown[], values: readonly unknown[]): Promise<Row[]> => {
    const size = 2 ** Math.ceil(Math.log2(values.length));
    let statement = bySize.get(size);
    if (!statement) {
      statement = db.prepare(sqlWith(Array.from({ length: size }, () => '?').join(', ')));
      bySize.set(size, statement);
    }
    return statement.all(...before, ...values, ...Array.from({ length: size - values.length }, () => values[0]));
  };
}
