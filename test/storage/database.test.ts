import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dialectOfUrl, maskUrl, openDatabase, sqlitePathOfUrl, UnsupportedDatabaseUrlError } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';

describe('database URLs', () => {
  it('picks the dialect from the scheme', () => {
    expect(dialectOfUrl('sqlite:data/sluice.db')).toBe('sqlite');
    expect(dialectOfUrl('sqlite::memory:')).toBe('sqlite');
    expect(dialectOfUrl('postgres://u@h/db')).toBe('postgres');
    expect(dialectOfUrl('postgresql://u@h/db')).toBe('postgres');
    expect(dialectOfUrl('mysql://u@h/db')).toBe('mysql');
    expect(dialectOfUrl('mariadb://u@h/db')).toBe('mysql');
    expect(dialectOfUrl('redis://h')).toBeUndefined();
    expect(dialectOfUrl('data/sluice.db')).toBeUndefined();
  });

  it('finds the SQLite path', () => {
    expect(sqlitePathOfUrl('sqlite:data/sluice.db')).toBe('data/sluice.db');
    expect(sqlitePathOfUrl('sqlite:///var/lib/sluice.db')).toBe('/var/lib/sluice.db');
    expect(sqlitePathOfUrl('sqlite::memory:')).toBe(':memory:');
    expect(() => sqlitePathOfUrl('sqlite:')).toThrow(UnsupportedDatabaseUrlError);
  });

  it('masks passwords', () => {
    expect(maskUrl('postgres://sluice:hunter2@127.0.0.1:5432/db')).toBe('postgres://sluice:***@127.0.0.1:5432/db');
    expect(maskUrl('sqlite:data/x.db')).toBe('sqlite:data/x.db');
    // As the drivers read it: the password runs to the last @. What does not parse is hidden whole.
    expect(maskUrl('postgres://u:p@ss@host/db')).toBe('postgres://u:***@host/db');
    expect(maskUrl('postgres://u:pa/ss@host/db')).toBe('***');
    expect(maskUrl('postgres://sluice@db:5432/x?sslmode=verify-full&password=hunter2&sslkey=k.pem')).toBe(
      'postgres://sluice@db:5432/x?sslmode=verify-full&password=***&sslkey=***',
    );
  });

  it('opens an in-memory SQLite database', async () => {
    const database = await openDatabase('sqlite::memory:');
    expect(database.dialect).toBe('sqlite');
    await database.ping();
    await database.close();
    await database.close();
  });

  it('makes a new SQLite file, and its WAL, readable by its owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-mode-'));
    const database = await openDatabase(`sqlite:${join(dir, 'new', 'sluice.db')}`);
    try {
      await migrateToLatest(database);
      expect(statSync(join(dir, 'new', 'sluice.db')).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'new', 'sluice.db-wal')).mode & 0o777).toBe(0o600);
    } finally {
      await database.close();
    }
  });

  it('rejects an unknown scheme', async () => {
    await expect(openDatabase('mongodb://u:pw@h/db')).rejects.toThrow(UnsupportedDatabaseUrlError);
  });
});
