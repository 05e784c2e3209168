// The ordered list of schema migrations; a new one is appended, never edited once released.
import foundation from './001-foundation.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [{ version: 1, name: 'foundation', sql: foundation }];
