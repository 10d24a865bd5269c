import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { decodeSecretKey, SECRET_KEY_FORMAT } from '../settings/schema.js';
import { type Settings, SettingsError } from '../settings/settings.js';

/**
 * The 32-byte key that encrypts provider secrets and keys recipient hashes in Redis: from
 * SLUICE_SECRET_KEY, else from SLUICE_SECRET_KEY_FILE, created (mode 0600) on first start.
 */
export function resolveSecretKey(
  settings: Pick<Settings, 'secretKey' | 'secretKeyFile'>,
  /** Told when the key file was just created (first start, or a process run with another working directory). */
  onCreated: (path: string) => void = () => {},
): Buffer {
  if (settings.secretKey) {
    const key = decodeSecretKey(settings.secretKey);
    if (!key) throw new SettingsError(SECRET_KEY_FORMAT);
    return key;
  }
  try {
    const key = decodeSecretKey(readFileSync(settings.secretKeyFile, 'utf8'));
    if (!key) throw new SettingsError(`${settings.secretKeyFile} must hold 32 bytes, base64-encoded`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32);
  mkdirSync(dirname(settings.secretKeyFile), { recursive: true });
  writeFileSync(settings.secretKeyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  onCreated(settings.secretKeyFile);
  return key;
}
