// `node --import <this file>`: appends every package a process imports (the specifier, one a line) to the file
// named by IMPORT_LOG, so a test can tell which libraries a process loaded.
import { register } from 'node:module';

register('./import-log-hooks.js', import.meta.url, { data: { log: process.env.IMPORT_LOG } });
