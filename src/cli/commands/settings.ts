// `gateway settings show` and `gateway settings s3 …`: the daemon's run-time settings (S3 storage, auto-persist).
import type { Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson } from '../output.js';

interface S3Flags {
  endpoint?: string;
  region?: string;
  bucket?: string;
  accessKey?: string;
  secret?: string;
  pathStyle?: boolean;
  prefix?: string;
  publicUrl?: string;
  presignSeconds?: string;
  autoPersist?: boolean;
  remove?: boolean;
}

export function register(program: Command): void {
  const settings = program.command('settings').description('run-time settings of the daemon (S3 storage, auto-persist)');

  settings
    .command('show')
    .description('show the settings (the S3 secret is never shown)')
    .action(async (_opts: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      printJson(await createClient(globals).request('GET', '/api/admin/settings'));
    });

  settings
    .command('s3')
    .description('set S3-compatible storage for media (fields not given keep their value)')
    .option('--endpoint <url>', 'S3 endpoint (omit for AWS)')
    .option('--region <region>', 'region (default us-east-1)')
    .option('--bucket <name>', 'bucket')
    .option('--access-key <id>', 'access key id')
    .option('--secret <key>', 'secret access key (write-only)')
    .option('--path-style', 'use path-style addressing (MinIO, most self-hosted stores)')
    .option('--prefix <prefix>', 'object key prefix')
    .option('--public-url <url>', 'objects are public under this base URL (otherwise presigned URLs)')
    .option('--presign-seconds <n>', 'lifetime of presigned URLs')
    .option('--auto-persist', 'upload every incoming media file on arrival')
    .option('--no-auto-persist', 'stop uploading incoming media on arrival')
    .option('--remove', 'remove the S3 settings (and turn auto-persist off)')
    .action(async (opts: S3Flags, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const s3 = {
        ...(opts.endpoint !== undefined ? { endpoint: opts.endpoint } : {}),
        ...(opts.region !== undefined ? { region: opts.region } : {}),
        ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}),
        ...(opts.accessKey !== undefined ? { accessKeyId: opts.accessKey } : {}),
        ...(opts.secret !== undefined ? { secretAccessKey: opts.secret } : {}),
        ...(opts.pathStyle ? { forcePathStyle: true } : {}),
        ...(opts.prefix !== undefined ? { keyPrefix: opts.prefix } : {}),
        ...(opts.publicUrl !== undefined ? { publicBaseUrl: opts.publicUrl } : {}),
        ...(opts.presignSeconds !== undefined ? { presignExpiresSeconds: Number(opts.presignSeconds) } : {}),
      };
      const body = opts.remove
        ? { s3: null, autoPersist: false }
        : { ...(Object.keys(s3).length ? { s3 } : {}), ...(opts.autoPersist !== undefined && command.getOptionValueSource('autoPersist') === 'cli' ? { autoPersist: opts.autoPersist } : {}) };
      printJson(await createClient(globals).request('PUT', '/api/admin/settings', body));
    });
}
