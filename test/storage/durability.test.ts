/**
 * A committed insert survives the process being killed (SQLite, WAL, group commit): a child
 * prints ids as their inserts resolve, then SIGKILLs itself; every printed id must be in the file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-durability-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite durability', () => {
  it('keeps every insert that resolved before a SIGKILL', async () => {
    const url = `sqlite:${join(dir, 'crash.db')}`;
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'crash-writer.ts'), url, '100'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    expect(signal).toBe('SIGKILL');
    const promised = output.split('\n').filter(Boolean);
    expect(promised.length).toBeGreaterThanOrEqual(100);

    const database = await openDatabase(url);
    try {
      const rows = await database.db.selectFrom('messages').select('id').where('id', 'in', promised).execute();
      expect(rows.length).toBe(promised.length);
    } finally {
      await database.close();
    }
  });
});
