import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/settings/schema.js';
import { describeSettings, loadSettings, SettingsError, unknownVariables } from '../../src/settings/settings.js';

describe('settings', () => {
  it('has defaults for everything: an empty environment is the embedded default', () => {
    const settings = loadSettings({});
    expect(settings.dbUrl).toBe('sqlite:./data/sluice.db');
    expect(settings.redisUrl).toBe('');
    expect(settings.roles).toEqual(['api', 'worker']);
    expect(settings.port).toBe(3000);
  });

  it('parses and checks the environment, naming every bad variable', () => {
    expect(loadSettings({ SLUICE_PORT: '8080', SLUICE_ROLES: 'api', SLUICE_SAMPLE_RATE: '0.5' })).toMatchObject({
      port: 8080,
      roles: ['api'],
      sampleRate: 0.5,
    });
    expect(() => loadSettings({ SLUICE_PORT: 'eighty', SLUICE_LOG_LEVEL: 'loud' })).toThrow(
      /SLUICE_PORT must be an integer.*SLUICE_LOG_LEVEL must be one of/,
    );
    expect(() => loadSettings({ SLUICE_PORT: '70000' })).toThrow(SettingsError);
    expect(() => loadSettings({ SLUICE_ROLES: 'api,cook' })).toThrow(/SLUICE_ROLES/);
  });

  it('checks what a value must mean, not only its type: the database URL, the secret key, the region, the roles', () => {
    const bad = {
      SLUICE_DB_URL: 'foo:bar',
      SLUICE_SECRET_KEY: 'short',
      SLUICE_DEFAULT_REGION: 'ZZ',
      SLUICE_ROLES: 'cook',
      SLUICE_PORT: 'eighty',
    };
    const error = (() => {
      try {
        loadSettings(bad);
      } catch (thrown) {
        return thrown as Error;
      }
    })();
    expect(error).toBeInstanceOf(SettingsError);
    for (const name of Object.keys(bad)) expect(error?.message).toContain(name);
    expect(() => loadSettings({ SLUICE_DB_URL: 'sqlite:' })).toThrow(/sqlite: needs a file path/);
    // `static` needs rules the service does not have: the limiter refused it at every start with Redis.
    expect(() => loadSettings({ SLUICE_FALLBACK_MODE: 'static' })).toThrow(/SLUICE_FALLBACK_MODE/);
    // Settings that cannot work together.
    expect(() => loadSettings({ SLUICE_DEGRADE_MS: '200', SLUICE_REDIS_TIMEOUT_MS: '100' })).toThrow(/must be above SLUICE_DEGRADE_MS/);
    // ... named beside another bad variable, not only once the others are right.
    expect(() => loadSettings({ SLUICE_DEGRADE_MS: '200', SLUICE_REDIS_TIMEOUT_MS: '100', SLUICE_PORT: 'x' })).toThrow(
      /SLUICE_PORT.*must be above SLUICE_DEGRADE_MS/,
    );
    expect(() => loadSettings({ SLUICE_SAMPLE_RATE: '0' })).toThrow(/SLUICE_SAMPLE_RATE must be above 0/);
    expect(() => loadSettings({ SLUICE_REDIS_URL: 'localhost:6379' })).toThrow(/SLUICE_REDIS_URL must start with redis:\/\//);
    expect(() => loadSettings({ SLUICE_REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2' })).toThrow(/each seed is host:port, not "10.0.0.2"/);
    expect(loadSettings({ SLUICE_REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001' }).redisClusterNodes).toEqual([
      '10.0.0.1:7000',
      'redis-b:7001',
    ]);
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadSettings({ SLUICE_SECRET_KEY: key, SLUICE_DEFAULT_REGION: 'US', SLUICE_DB_URL: 'postgres://u@h/db' })).toMatchObject({
      secretKey: key,
      defaultRegion: 'US',
    });
  });

  it('checks the broker servers: nats:// or tls:// for all, host and port only, no credentials (named, never quoted)', () => {
    expect(loadSettings({ SLUICE_BROKER_URL: 'nats://a:4222, nats://b:4223' }).brokerUrl).toEqual(['nats://a:4222', 'nats://b:4223']);
    expect(loadSettings({ SLUICE_BROKER_URL: 'tls://nats.example.com' }).brokerUrl).toEqual(['tls://nats.example.com']);
    expect(loadSettings({}).brokerUrl).toEqual([]);
    expect(() => loadSettings({ SLUICE_BROKER_URL: 'localhost:4222' })).toThrow(/SLUICE_BROKER_URL must start with nats:\/\/ or tls:\/\//);
    expect(() => loadSettings({ SLUICE_BROKER_URL: 'nats://a:4222,tls://b:4222' })).toThrow(/mixes nats:\/\/ and tls:\/\//);
    expect(() => loadSettings({ SLUICE_BROKER_URL: 'nats://a:4222/x' })).toThrow(/must be nats:\/\/host:port, nothing after it/);
    expect(() => loadSettings({ SLUICE_BROKER_URL: 'nats://a:4222,nats://b:70000' })).toThrow(/server 2 of 2\) is not a URL/);
    let message = '';
    try {
      loadSettings({ SLUICE_BROKER_URL: 'nats://a:4222,nats://sluice:hunter2@b:4222' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('SLUICE_BROKER_URL (server 2 of 2) holds credentials: put them in SLUICE_BROKER_CREDENTIALS_FILE');
    expect(message).not.toContain('hunter2');
    expect(() => loadSettings({ SLUICE_BROKER_PREFIX: 'sluice.prod' })).toThrow(/SLUICE_BROKER_PREFIX must be/);
  });

  it('names SLUICE_* variables it does not read (a misspelling is otherwise silent)', () => {
    expect(
      unknownVariables({
        SLUICE_PROT: '80',
        SLUICE_PORT: '80',
        SLUICE_CONFIG: 'f.json',
        SLUICE_API_KEY: 'k',
        SLUICE_TEST_PG_URL: 'postgres://t',
        PATH: '/bin',
      }),
    ).toEqual(['SLUICE_PROT']);
  });

  it('a settings file that is not JSON is named without quoting its text (it may hold the admin token)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-settings-'));
    const file = join(dir, 'settings.json');
    writeFileSync(file, '{"SLUICE_ADMIN_TOKEN": hunter2-token}');
    expect(() => loadSettings({}, file)).toThrow(SettingsError);
    expect(() => loadSettings({}, file)).toThrow(`config file ${file} is not valid JSON`);
    try {
      loadSettings({}, file);
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });

  it('masks secrets in config check output', () => {
    const lines = describeSettings(
      loadSettings({
        SLUICE_ADMIN_TOKEN: 'hunter2',
        SLUICE_REDIS_URL: 'redis://:pw@127.0.0.1:6379',
        SLUICE_DB_URL: 'postgres://u:secret@db/x',
      }),
    );
    const text = lines.join('\n');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('secret@');
    expect(text).toContain('SLUICE_ADMIN_TOKEN=***');
    expect(text).toContain('SLUICE_DB_URL=postgres://u:***@db/x');
    // A token that parses as a URL is still a token; a password may come as a query parameter.
    const other = describeSettings(
      loadSettings({ SLUICE_ADMIN_TOKEN: 'postgres:hunter2', SLUICE_DB_URL: 'postgres://u@db/x?sslmode=require&password=hunter3' }),
    ).join('\n');
    expect(other).not.toMatch(/hunter2|hunter3/);
    expect(other).toContain('SLUICE_ADMIN_TOKEN=***');
    expect(other).toContain('SLUICE_DB_URL=postgres://u@db/x?sslmode=require&password=***');
    expect(describeSettings(loadSettings({ SLUICE_DB_URL: 'sqlite:./data/sluice.db' })).join('\n')).toContain(
      'SLUICE_DB_URL=sqlite:./data/sluice.db',
    );
  });

  it('docs/configuration.md documents every setting with its default', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\|\s*`(SLUICE_[A-Z_]+)`\s*\|\s*(.*?)\s*\|/gm)].map((match) => [match[1], match[2]]);
    const shown = (value: unknown) => {
      const text = Array.isArray(value) ? value.join(',') : String(value);
      return text === '' ? '(empty)' : `\`${text}\``;
    };
    const expected = Object.values(SETTINGS).map((s) => [s.env, shown(s.default)]);
    expect(documented).toEqual(expected);
  });
});
