import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, loggerOptions, requestSerializer } from '../../src/infra/logging.js';

/** A logger built as sluice builds its own, writing its lines to an array. */
function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino(loggerOptions('info'), sink), lines };
}

describe('sluice loggers', () => {
  it('log a Redis error by its command name, never its arguments (the password of AUTH)', () => {
    const { logger, lines } = capture();
    // What ioredis attaches to a failed command's error.
    const refused = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['s3cret-redis-pw'] },
    });
    const wrapped = Object.assign(new Error('dispatcher tick failed', { cause: refused }), {
      errors: [Object.assign(new Error('again'), { command: { name: 'auth', args: ['s3cret-redis-pw'] } })],
    });
    logger.warn({ err: refused }, 'Redis connection error');
    logger.error({ err: wrapped }, 'tick failed');
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain('s3cret-redis-pw');
    expect(JSON.parse(lines[0]!).err).toMatchObject({ message: 'WRONGPASS invalid username-password pair', command: { name: 'auth' } });
    // The original error keeps its command: only the log line loses the arguments.
    expect(refused.command.args).toEqual(['s3cret-redis-pw']);
  });

  it("log a database error without the statement and values the driver quotes (mysql2's sql, pg's detail)", () => {
    const { logger, lines } = capture();
    const mysql = Object.assign(new Error("Data too long for column 'recipient' at row 1"), {
      code: 'ER_DATA_TOO_LONG',
      errno: 1406,
      sql: "insert into messages values ('+8613800138000', 'Your code is 1234')",
      sqlMessage: "Data too long for column 'recipient' at row 1",
    });
    const pg = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      detail: 'Key (name)=(alice@example.com) already exists.',
      parameters: ['alice@example.com'],
    });
    const duplicate = Object.assign(new Error("Duplicate entry '+8613800138000' for key 'blacklist.PRIMARY'"), {
      code: 'ER_DUP_ENTRY',
      errno: 1062,
      sqlState: '23000',
      sqlMessage: "Duplicate entry '+8613800138000' for key 'blacklist.PRIMARY'",
    });
    logger.error({ err: duplicate }, 'insert failed');
    expect(lines[0]).not.toContain('8613800138000');
    expect(JSON.parse(lines[0]!).err).toMatchObject({ message: 'database error ER_DUP_ENTRY', code: 'ER_DUP_ENTRY' });
    lines.length = 0;
    logger.error({ err: mysql }, 'insert failed');
    logger.error({ err: pg }, 'insert failed');
    expect(lines.join('')).not.toMatch(/8613800138000|Your code|alice@example.com/);
    expect(JSON.parse(lines[0]!).err).toMatchObject({ code: 'ER_DATA_TOO_LONG', errno: 1406 });
  });

  it('redact secrets and passwords one level down', () => {
    const { logger, lines } = capture();
    logger.info({ provider: { secret: 'x-secret', password: 'x-password', name: 'smtp' }, apiKey: 'sk_x' }, 'changed');
    expect(lines[0]).not.toMatch(/x-secret|x-password|sk_x/);
    expect(lines[0]).toContain('"name":"smtp"');
  });

  it('name a request by its route pattern, not its URL (a ban lift carries the recipient)', () => {
    const request = {
      id: 'r1',
      method: 'DELETE',
      url: '/v1/admin/tenants/t/bans/sms/+8613800138000',
      routeOptions: { url: '/v1/admin/tenants/:id/bans/:channel/:to' },
    };
    expect(requestSerializer(request)).toEqual({ id: 'r1', method: 'DELETE', route: '/v1/admin/tenants/:id/bans/:channel/:to' });
    expect(JSON.stringify(requestSerializer(request))).not.toContain('8613800138000');
  });
});

describe('createLogger', () => {
  const capture = () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, destination };
  };

  it('writes JSON lines unless asked for readable ones or writing to a terminal', () => {
    const { lines, destination } = capture();
    createLogger('info', 'auto', { isTerminal: false, destination }).info({ secret: 'hunter2' }, 'hello');
    const line = JSON.parse(lines.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'hello', secret: '[Redacted]' });
  });

  it('writes readable lines on a terminal (auto) and when asked (pretty), with secrets still redacted', () => {
    for (const [format, isTerminal] of [
      ['auto', true],
      ['pretty', false],
    ] as const) {
      const { lines, destination } = capture();
      createLogger('info', format, { isTerminal, destination }).info({ secret: 'hunter2' }, 'hello');
      const text = lines.join('');
      expect(text, format).toMatch(/INFO.*hello/);
      expect(text, format).not.toMatch(/^\{/);
      expect(text, format).not.toContain('hunter2');
    }
  });
});
