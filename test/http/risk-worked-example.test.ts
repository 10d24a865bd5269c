/**
 * docs/risk.md's worked example, run as written: its rule set, its checks and its events are read
 * from the page (the `-d` bodies of its curl commands, in order) and each documented answer (the
 * JSON in its comments, in order) is what the server answers, with both ways of deciding a check.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

const page = readFileSync(new URL('../../docs/risk.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('## Worked example'), page.indexOf('\n## ', page.indexOf('## Worked example') + 1));

/** The first balanced `{...}` of a line (the answers hold no brace inside a string). */
function jsonOf(line: string): unknown {
  const start = line.indexOf('{');
  let depth = 0;
  for (let i = start; i < line.length; i++) {
    if (line[i] === '{') depth++;
    else if (line[i] === '}' && --depth === 0) return JSON.parse(line.slice(start, i + 1));
  }
  throw new Error(`no JSON in ${line}`);
}

const bodies = [...section.matchAll(/-d '([^']*)'/g)].map((match) => JSON.parse(match[1]!) as Record<string, unknown>);
const answers = section
  .split('\n')
  .filter((line) => line.startsWith('#') && line.includes('{'))
  .map(jsonOf);

describe('docs/risk.md, the worked example', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers as the page says, its full rule set in force', async () => {
    expect(bodies).toHaveLength(4);
    expect(answers).toHaveLength(5);
    const [rules, check, event, userOnly] = bodies as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    const tenant = await t.createTenant();
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, rules);
    expect(put.statusCode, put.body).toBe(200);
    const call = (url: string, body: unknown) => t.call(tenant.apiKey, 'POST', url, body);

    expect((await call('/v1/risk/check', check)).json()).toEqual(answers[0]);
    for (let i = 0; i < 2; i++) expect((await call('/v1/risk/check', check)).json().decision).toBe('allow');
    expect((await call('/v1/risk/check', check)).json()).toEqual(answers[1]);
    // The phone's codes leave their window: what decides next is the failures alone.
    t.clock.advance(300_000);

    const recorded = await call('/v1/risk/events', event);
    expect(recorded.statusCode, recorded.body).toBe(202);
    expect(recorded.json()).toEqual(answers[2]);
    const partial = await call('/v1/risk/events', userOnly);
    expect(partial.statusCode, partial.body).toBe(202);
    expect(partial.json()).toEqual(answers[3]);
    expect((await call('/v1/risk/check', check)).json().allowed).toBe(true);
    expect((await call('/v1/risk/events', userOnly)).statusCode).toBe(202);
    expect((await call('/v1/risk/check', check)).json()).toEqual(answers[4]);
  });
});
