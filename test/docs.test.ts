import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/settings/schema.js';

const root = new URL('../', import.meta.url);
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(new URL('docs/', root))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

/** The docs' examples work as pasted against a sluice started with the defaults. */
describe('docs examples', () => {
  it('every local HTTP address (curl examples, pages to open) is on the default port', () => {
    const port = String(SETTINGS.port.default);
    const wrong: string[] = [];
    for (const page of pages) {
      readFileSync(new URL(page, root), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          // Other servers' URLs (redis://127.0.0.1:6379) name their own ports.
          for (const [address, scheme, found] of line.matchAll(/(?:([a-z]+):\/\/)?\b(?:localhost|127\.0\.0\.1):(\d+)/g)) {
            if (scheme !== undefined && !/^https?$/.test(scheme)) continue;
            if (found !== port) wrong.push(`${page}:${index + 1}: ${address}`);
          }
        });
    }
    expect(wrong).toEqual([]);
  });
});
