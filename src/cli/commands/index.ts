// The command table: every command file's register(), in help order.
import type { Command } from 'commander';
import { register as serve } from './serve.js';

export const COMMANDS: Array<(program: Command) => void> = [serve];
