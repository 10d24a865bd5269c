/**
 * Encryption at rest for provider secrets: AES-256-GCM with a 32-byte key from configuration.
 *
 * Sealed format: `v1.<base64url(iv 12 bytes | tag 16 bytes | ciphertext)>`. The version prefix
 * leaves room for key rotation. An optional `context` (the provider id) is bound as additional
 * authenticated data, so a ciphertext copied onto another row does not decrypt.
 * The key is held in a private field and never printed (`inspect`/`toJSON` show a placeholder).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  readonly #key: Buffer;

  /** @param key exactly 32 bytes (256 bits). */
  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new RangeError(`SecretBox needs a 32-byte key, got ${key.length} bytes`);
    this.#key = Buffer.from(key);
  }

  /** From configuration text: 64 hex characters or base64/base64url of 32 bytes. */
  static fromString(text: string): SecretBox {
    const trimmed = text.trim();
    const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
    return new SecretBox(key);
  }

  /** A fresh random key as base64 (for `sluice config` / docs). */
  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  /** Encrypts `clear`; every call uses a fresh random IV, so equal secrets seal differently. */
  seal(clear: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** Decrypts what {@link seal} made with the same key and context; throws if it was altered. */
  open(sealed: string, context = ''): string {
    const [version, data] = sealed.split('.', 2);
    if (version !== VERSION || data === undefined) throw new Error('SecretBox: unknown sealed format');
    const raw = Buffer.from(data, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('SecretBox: sealed value too short');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  toJSON(): string {
    return 'SecretBox(***)';
  }

  [inspect.custom](): string {
    return 'SecretBox(***)';
  }
}
