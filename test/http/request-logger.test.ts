/**
 * The request logger built at its first line writes what pino's own child would: the request's
 * bindings on every line, the route's level, children of its own.
 */
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { expect, it } from 'vitest';
import { lazyRequestLogger } from '../../src/http/request-logger.js';

function memoryLogger(): { logger: FastifyBaseLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, stream) as unknown as FastifyBaseLogger;
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

it('writes the request bindings at the level the route asks, as pino.child does', () => {
  const { logger, lines } = memoryLogger();
  const lazy = lazyRequestLogger.call(undefined as never, logger, { reqId: 'req-1' }, { level: 'info' }, undefined as never);
  const eager = logger.child({ reqId: 'req-1' }, { level: 'info' });
  expect(lazy.level).toBe('info');
  for (const requestLogger of [lazy, eager]) {
    requestLogger.debug('dropped at info');
    requestLogger.error({ code: 'UNAVAILABLE' }, 'request failed');
    requestLogger.child({ step: 'persist' }).warn('from a child');
  }
  const written = lines().map(({ time: _time, pid: _pid, hostname: _hostname, ...line }) => line);
  expect(written).toEqual([
    { level: 50, reqId: 'req-1', code: 'UNAVAILABLE', msg: 'request failed' },
    { level: 40, reqId: 'req-1', step: 'persist', msg: 'from a child' },
    { level: 50, reqId: 'req-1', code: 'UNAVAILABLE', msg: 'request failed' },
    { level: 40, reqId: 'req-1', step: 'persist', msg: 'from a child' },
  ]);
});

it('changes its level as a child would', () => {
  const { logger, lines } = memoryLogger();
  const lazy = lazyRequestLogger.call(undefined as never, logger, { reqId: 'req-2' }, {}, undefined as never);
  lazy.level = 'error';
  lazy.warn('dropped');
  lazy.error('kept');
  expect(lines().map((line) => line.msg)).toEqual(['kept']);
});
