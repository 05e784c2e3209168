// Printing for people (cli-table3) or scripts (--json).
import { createRequire } from 'node:module';

// loaded when a table is first printed: `gateway serve` never draws one
const loadTable = (): typeof import('cli-table3') => createRequire(import.meta.url)('cli-table3') as typeof import('cli-table3');

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(head: string[], rows: Array<Array<string | number | boolean | null | undefined>>): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const Table = loadTable();
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(row.map((cell) => (cell === null || cell === undefined ? '' : String(cell))));
  process.stdout.write(`${table.toString()}\n`);
}

export function printRecord(record: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    process.stdout.write(`${key.padEnd(width)}  ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}\n`);
  }
}
