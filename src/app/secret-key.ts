import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Settings } from '../config/settings.js';
import { SettingsError } from '../config/settings.js';

/**
 * The 32-byte key that encrypts provider secrets and keys recipient hashes in Redis: from
 * SLUICE_SECRET_KEY, else from SLUICE_SECRET_KEY_FILE, created (mode 0600) on first start.
 */
export function resolveSecretKey(settings: Pick<Settings, 'secretKey' | 'secretKeyFile'>): Buffer {
  if (settings.secretKey) {
    const key = Buffer.from(settings.secretKey, 'base64');
    if (key.length !== 32) throw new SettingsError('SLUICE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
    return key;
  }
  try {
    const key = Buffer.from(readFileSync(settings.secretKeyFile, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new SettingsError(`${settings.secretKeyFile} must hold 32 bytes, base64-encoded`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32);
  mkdirSync(dirname(settings.secretKeyFile), { recursive: true });
  writeFileSync(settings.secretKeyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
