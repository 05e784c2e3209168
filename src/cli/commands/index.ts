// The command table: every command file's register(), in help order.
import type { Command } from 'commander';
import { register as audit } from './audit.js';
import { register as backup } from './backup.js';
import { register as clientAccess } from './client-access.js';
import { register as cluster } from './cluster.js';
import { register as doctor } from './doctor.js';
import { register as events } from './events.js';
import { register as groups } from './groups.js';
import { register as init } from './init.js';
import { register as keys } from './keys.js';
import { register as openapi } from './openapi.js';
import { register as rotateMasterKey } from './rotate-master-key.js';
import { register as sandbox } from './sandbox.js';
import { register as send } from './send.js';
import { register as serve } from './serve.js';
import { register as sessions } from './sessions.js';
import { register as settings } from './settings.js';
import { register as status } from './status.js';
import { register as webhooks } from './webhooks.js';

export const COMMANDS: Array<(program: Command) => void> = [
  serve,
  init,
  status,
  sessions,
  groups,
  keys,
  webhooks,
  events,
  sandbox,
  send,
  clientAccess,
  settings,
  audit,
  openapi,
  rotateMasterKey,
  backup,
  doctor,
  cluster,
];
