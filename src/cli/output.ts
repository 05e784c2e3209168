// Printing for people (cli-table3) or scripts (--json). What people see passes through escapeControlCharacters: group
// subjects, names and the daemon's messages come from others and must not drive the terminal; --json prints as is.
import { createRequire } from 'node:module';
import { escapeControlCharacters } from '../control-characters.js';

// loaded when a table is first printed: `gateway serve` never draws one
const loadTable = (): typeof import('cli-table3') => createRequire(import.meta.url)('cli-table3') as typeof import('cli-table3');

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Text for people, its line breaks kept and every other control character shown escaped. */
export function printText(text: string, out: NodeJS.WritableStream = process.stdout): void {
  out.write(forTerminal(text));
}

export const forTerminal = (text: string): string => text.split('\n').map(escapeControlCharacters).join('\n');

export function printTable(head: string[], rows: Array<Array<string | number | boolean | null | undefined>>): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const Table = loadTable();
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(row.map((cell) => (cell === null || cell === undefined ? '' : escapeControlCharacters(String(cell)))));
  process.stdout.write(`${table.toString()}\n`);
}

export function printRecord(record: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    const shown = typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
    process.stdout.write(`${key.padEnd(width)}  ${escapeControlCharacters(shown)}\n`);
  }
}
