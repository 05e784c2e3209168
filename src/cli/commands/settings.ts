// `gateway settings show` and `gateway settings s3 …`: the daemon's run-time settings (S3 storage, auto-persist).
import type { Command } from 'commander';
import { createClient, type GlobalOptions } from '../client.js';
import { printJson, printRecord, printText } from '../output.js';

/** The daemon's settings view (src/config/runtime-settings.ts): the secret is only said to be set. */
interface SettingsView {
  s3: {
    endpoint?: string;
    region: string;
    bucket: string;
    accessKeyId: string;
    secretAccessKeySet: boolean;
    forcePathStyle: boolean;
    keyPrefix: string;
    publicBaseUrl?: string;
    presignExpiresSeconds: number;
  } | null;
  autoPersist: boolean;
}

/** A listing for people (`--json` prints the daemon's JSON). */
function printSettings(view: SettingsView, json: boolean | undefined): void {
  if (json) return printJson(view);
  const s3 = view.s3;
  if (!s3) printText('S3 storage: not configured (`gateway settings s3 --help` to set it)\n');
  else {
    printText('S3 storage:\n');
    printRecord({
      '  endpoint': s3.endpoint ?? '(AWS)',
      '  region': s3.region,
      '  bucket': s3.bucket,
      '  access key id': s3.accessKeyId,
      '  secret access key': s3.secretAccessKeySet ? '(set)' : '(not set)',
      '  addressing': s3.forcePathStyle ? 'path-style' : 'virtual-hosted',
      '  key prefix': s3.keyPrefix || '(none)',
      '  media URLs': s3.publicBaseUrl ? `public under ${s3.publicBaseUrl}` : `presigned, valid ${s3.presignExpiresSeconds} s`,
    });
  }
  printText(`auto-persist: ${view.autoPersist ? 'on (every incoming media file is uploaded on arrival)' : 'off'}\n`);
}

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
      printSettings(await createClient(globals).request<SettingsView>('GET', '/api/admin/settings'), globals.json);
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
      printSettings(await createClient(globals).request<SettingsView>('PUT', '/api/admin/settings', body), globals.json);
    });
}
