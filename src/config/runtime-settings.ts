// Settings changed at run time through /api/admin/settings: S3 storage and auto-persist. Kept in the store; the secret is write-only.
import type { SettingsRepo } from '../store/settings.js';

export interface S3Settings {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  keyPrefix: string;
  /** objects are public under this base URL; otherwise persist answers with a presigned URL */
  publicBaseUrl?: string;
  presignExpiresSeconds: number;
}

export interface RuntimeSettings {
  s3: S3Settings | null;
  autoPersist: boolean;
}

export type S3SettingsView = Omit<S3Settings, 'secretAccessKey'> & { secretAccessKeySet: boolean };

export interface RuntimeSettingsView {
  s3: S3SettingsView | null;
  autoPersist: boolean;
}

export type S3SettingsPatch = Partial<S3Settings>;

export interface RuntimeSettingsPatch {
  s3?: S3SettingsPatch | null;
  autoPersist?: boolean;
}

const KEY = 'runtime';
const DEFAULTS: RuntimeSettings = { s3: null, autoPersist: false };

export class RuntimeSettingsStore {
  private current: RuntimeSettings;
  private updating: Promise<void> = Promise.resolve();
  private readonly listeners: Array<(settings: RuntimeSettings) => void> = [];
  /** in a cluster: tells the other daemons of a change made here */
  changedHere: (() => void) | undefined;

  /** Reads the stored settings once; after that they are read from memory. */
  static async open(repo: SettingsRepo): Promise<RuntimeSettingsStore> {
    return new RuntimeSettingsStore(repo, (await repo.get<RuntimeSettings>(KEY)) ?? { ...DEFAULTS });
  }

  constructor(
    private readonly repo: SettingsRepo,
    initial: RuntimeSettings,
  ) {
    this.current = initial;
  }

  get(): RuntimeSettings {
    return this.current;
  }

  /** Reads the settings again: another daemon sharing the store changed them. */
  async reload(): Promise<void> {
    this.current = (await this.repo.get<RuntimeSettings>(KEY)) ?? { ...DEFAULTS };
    for (const listener of this.listeners) listener(this.current);
  }

  view(): RuntimeSettingsView {
    const { s3, autoPersist } = this.current;
    if (!s3) return { s3: null, autoPersist };
    const { secretAccessKey, ...rest } = s3;
    return { s3: { ...rest, secretAccessKeySet: secretAccessKey.length > 0 }, autoPersist };
  }

  /** Applies a partial change; S3 fields merge into the current ones (a new bucket keeps the old secret). */
  update(patch: RuntimeSettingsPatch, validate: (next: RuntimeSettings) => void): Promise<RuntimeSettingsView> {
    // one at a time: each change merges into the settings the one before it wrote
    const result = this.updating.then(() => this.apply(patch, validate));
    this.updating = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private async apply(patch: RuntimeSettingsPatch, validate: (next: RuntimeSettings) => void): Promise<RuntimeSettingsView> {
    const next: RuntimeSettings = { ...this.current };
    if (patch.s3 === null) next.s3 = null;
    else if (patch.s3) {
      next.s3 = {
        region: 'us-east-1',
        forcePathStyle: false,
        keyPrefix: '',
        presignExpiresSeconds: 3600,
        ...(this.current.s3 ?? {}),
        ...patch.s3,
      } as S3Settings;
    }
    if (patch.autoPersist !== undefined) next.autoPersist = patch.autoPersist;
    validate(next);
    await this.repo.set(KEY, next);
    this.current = next;
    for (const listener of this.listeners) listener(next);
    this.changedHere?.();
    return this.view();
  }

  onChange(listener: (settings: RuntimeSettings) => void): void {
    this.listeners.push(listener);
  }
}
