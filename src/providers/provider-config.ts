/**
 * Reading a provider's `config` (plain settings, shown in the admin API) and `secret` (credentials,
 * never shown or logged) with errors that name the provider and the field, and never the value.
 */
import { DEFAULT_TIMEOUT_MS } from './provider.js';

export class ProviderConfigReader {
  /** `config.<field>` and `secret.<field>` names asked for so far, to find the ones nobody reads. */
  private readonly asked = new Set<string>();

  constructor(
    private readonly providerId: string,
    private readonly kind: string,
    private readonly config: Record<string, unknown>,
    private readonly secret: Record<string, string>,
  ) {}

  private fail(field: string, expected: string): never {
    throw new Error(`provider "${this.providerId}" (${this.kind}): ${field} is required (${expected})`);
  }

  private invalid(field: string, expected: string): never {
    throw new Error(`provider "${this.providerId}" (${this.kind}): ${field} must be ${expected}`);
  }

  /**
   * The fields given but never read by the kind's builder: a misspelt setting (`timeOutMs`), one
   * of another kind, or one that only counts with another (`secret.password` without `user`).
   * Meaningful once the provider is built.
   */
  unreadFields(): string[] {
    return [
      ...Object.keys(this.config).map((field) => `config.${field}`),
      ...Object.keys(this.secret).map((field) => `secret.${field}`),
    ].filter((field) => !this.asked.has(field));
  }

  private configValue(field: string): unknown {
    this.asked.add(`config.${field}`);
    return this.config[field];
  }

  private secretValue(field: string): unknown {
    this.asked.add(`secret.${field}`);
    return this.secret[field];
  }

  string(field: string): string {
    const value = this.configValue(field);
    if (value === undefined || value === null || value === '') this.fail(`config.${field}`, 'a non-empty string');
    if (typeof value !== 'string') this.invalid(`config.${field}`, 'a string');
    return value;
  }

  optionalString(field: string): string | undefined {
    const value = this.configValue(field);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') this.invalid(`config.${field}`, 'a string');
    return value;
  }

  url(field: string): string {
    return this.checkUrl(`config.${field}`, this.string(field));
  }

  optionalUrl(field: string): string | undefined {
    const value = this.optionalString(field);
    return value === undefined ? undefined : this.checkUrl(`config.${field}`, value);
  }

  /** A URL that is a credential (a chat bot's hook carries its token): checked, never echoed. */
  secretUrl(field: string): string {
    return this.checkUrl(`secret.${field}`, this.secretString(field));
  }

  /** A secret URL, or undefined when not given. */
  optionalSecretUrl(field: string): string | undefined {
    const value = this.optionalSecretString(field);
    return value === undefined ? undefined : this.checkUrl(`secret.${field}`, value);
  }

  /** True when the config has `field` (without reading it). */
  hasConfig(field: string): boolean {
    return this.config[field] !== undefined;
  }

  private checkUrl(field: string, value: string): string {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      this.invalid(field, 'an http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') this.invalid(field, 'an http(s) URL');
    return value;
  }

  optionalInteger(field: string, range: { min: number; max: number }): number | undefined {
    const value = this.configValue(field);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
      this.invalid(`config.${field}`, `an integer in [${range.min}, ${range.max}]`);
    }
    return value;
  }

  optionalBoolean(field: string): boolean | undefined {
    const value = this.configValue(field);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') this.invalid(`config.${field}`, 'true or false');
    return value;
  }

  /** The per-request bound: `config.timeoutMs`, 10 s by default. */
  timeoutMs(): number {
    return this.optionalInteger('timeoutMs', { min: 1, max: 600_000 }) ?? DEFAULT_TIMEOUT_MS;
  }

  secretString(field: string): string {
    const value = this.secretValue(field);
    if (typeof value !== 'string' || value === '') this.fail(`secret.${field}`, 'a non-empty string');
    return value;
  }

  optionalSecretString(field: string): string | undefined {
    const value = this.secretValue(field);
    return typeof value === 'string' && value !== '' ? value : undefined;
  }
}
