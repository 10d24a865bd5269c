import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/core/errors.js';

/** docs/errors.md's table must list exactly the codes and statuses of src/core/errors.ts. */
describe('docs/errors.md', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map((match) => [match[1], Number(match[2])] as const);

  it('lists every code with its status, and nothing else', () => {
    const documented = Object.fromEntries(rows);
    const inCode = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
    expect(documented).toEqual(inCode);
    expect(rows.length).toBe(Object.keys(ERROR_CODES).length);
  });
});
