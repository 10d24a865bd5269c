/**
 * What an operator reads on a terminal, through the formatter `serve` uses there (pretty, as when
 * standard output is a TTY): no raw JSON line (Fastify's "Server listening" included), no line per
 * partition taken at every start, a final "stopped" line; and with Redis unreachable, one plain
 * line at start and connection errors without their stack.
 */
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logging.js';
import { createRuntime } from '../../src/main/runtime.js';
import { startRoles } from '../../src/main/service.js';
import { loadSettings } from '../../src/settings/settings.js';
import { silentConsole, tempDir, testEnv } from '../delivery/delivery-support.js';
import { freePort } from '../support/net.js';

const temp = tempDir();
afterAll(() => temp.cleanup());

/** A terminal's worth of log: the pretty formatter writing into a string, colours removed. */
function terminal() {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger('info', 'auto', { isTerminal: true, destination });
  return { logger, lines: () => stripVTControlCharacters(text).split('\n').filter(Boolean) };
}

async function serveWith(extra: Record<string, string>) {
  const out = terminal();
  const env = testEnv(temp.dir, undefined, { SLUICE_HOST: '127.0.0.1', SLUICE_PORT: '0', SLUICE_LOG_LEVEL: 'info', ...extra });
  const service = await startRoles(await createRuntime(loadSettings(env, undefined), { logger: out.logger }), {
    fallbackProvider: silentConsole(),
  });
  return { service, lines: out.lines };
}

describe('the log on a terminal', () => {
  it('has no JSON line, no line per partition, and ends with "sluice stopped"', async () => {
    const { service, lines } = await serveWith({ SLUICE_ROLES: 'api,worker' });
    await service.stop();
    const all = lines();
    expect(all.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(all.some((line) => /INFO: Server listening at http:\/\/127\.0\.0\.1:\d+$/.test(line))).toBe(true);
    expect(all.filter((line) => line.includes('holds its partition'))).toEqual([]);
    expect(all.filter((line) => /^\[[\d:.]+\] /.test(line)).at(-1)).toMatch(/INFO: sluice stopped$/);
  });

  it('with Redis unreachable: one plain line at start, and connection errors without a stack', async () => {
    const { service, lines } = await serveWith({ SLUICE_ROLES: 'api', SLUICE_REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      const all = lines();
      expect(all.filter((line) => line.includes('WARN: Redis is unreachable'))).toHaveLength(1);
      expect(all.filter((line) => line.includes('Redis connection error')).length).toBeLessThanOrEqual(2);
      expect(all.filter((line) => /^\s+at /.test(line))).toEqual([]);
    } finally {
      await service.stop();
    }
  });
});
