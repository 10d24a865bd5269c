/**
 * The process settings, read from the environment, optionally over a JSON file (`SLUICE_CONFIG` or
 * `--config`) whose keys are the variable names; every variable is declared in schema.ts.
 */
import { readFileSync } from 'node:fs';
import { jsonSyntaxProblem } from '../core/errors.js';
import { maskUrl } from '../core/urls.js';
import { SETTINGS, type SettingName, type Settings } from './schema.js';
import type { SettingSpec } from './spec.js';

export type { Settings } from './schema.js';

const SETTING_VARIABLES = new Set(Object.values(SETTINGS).map((s) => s.env));

export class SettingsError extends Error {
  override name = 'SettingsError';
}

function parseValue(s: SettingSpec, raw: unknown): unknown {
  const text = typeof raw === 'string' ? raw.trim() : raw;
  switch (s.kind) {
    case 'string': {
      if (typeof text !== 'string') throw new SettingsError(`${s.env} must be a string`);
      if (s.oneOf && !s.oneOf.includes(text)) throw new SettingsError(`${s.env} must be one of ${s.oneOf.join(', ')} (got "${text}")`);
      return text;
    }
    case 'int':
    case 'number': {
      const n = typeof text === 'number' ? text : Number(text);
      if (!Number.isFinite(n) || (s.kind === 'int' && !Number.isInteger(n)) || text === '') {
        throw new SettingsError(`${s.env} must be ${s.kind === 'int' ? 'an integer' : 'a number'} (got "${String(raw)}")`);
      }
      if (s.range && (n < s.range[0] || n > s.range[1]))
        throw new SettingsError(`${s.env} must be within [${s.range[0]}, ${s.range[1]}] (got ${n})`);
      return n;
    }
    case 'bool': {
      if (typeof text === 'boolean') return text;
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw new SettingsError(`${s.env} must be true or false (got "${String(raw)}")`);
    }
    case 'list': {
      if (Array.isArray(text)) return text.map(String);
      if (typeof text !== 'string') throw new SettingsError(`${s.env} must be a comma-separated list`);
      return text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    }
  }
}

/**
 * Settings from defaults, then the JSON file (if any), then the environment; throws SettingsError
 * naming every bad variable at once.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, file = env.SLUICE_CONFIG): Settings {
  let fromFile: Record<string, unknown> = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new SettingsError(`cannot read config file ${file}: ${(error as Error).message}`);
    }
    try {
      fromFile = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new SettingsError(`config file ${file} is ${jsonSyntaxProblem(error)}`);
    }
    const unknown = Object.keys(fromFile).filter((key) => !SETTING_VARIABLES.has(key));
    if (unknown.length) throw new SettingsError(`unknown setting(s) in ${file}: ${unknown.join(', ')}`);
  }
  const problems: string[] = [];
  const result: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [SettingName, SettingSpec][]) {
    const raw = env[s.env] ?? fromFile[s.env];
    try {
      const value = raw === undefined || raw === '' ? s.default : parseValue(s, raw);
      const problem = s.check?.(value as never);
      if (problem) problems.push(problem);
      result[name] = value;
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  problems.push(...crossProblems(result as Partial<Settings>));
  if (problems.length) throw new SettingsError(problems.join('; '));
  return result as Settings;
}

/** Settings valid one by one that cannot work together. */
function crossProblems(settings: Partial<Settings>): string[] {
  const problems: string[] = [];
  // Judged whenever both parsed, so `config check` names this beside any other bad variable.
  if (settings.redisTimeoutMs === undefined || settings.degradeMs === undefined) return problems;
  // A call is "bad" (degrading) above SLUICE_DEGRADE_MS and "failed" at the timeout: a timeout
  // at or below the degrade latency leaves no such thing as bad-but-answered.
  if (settings.redisTimeoutMs <= settings.degradeMs)
    problems.push(
      `SLUICE_REDIS_TIMEOUT_MS (${settings.redisTimeoutMs}) must be above SLUICE_DEGRADE_MS (${settings.degradeMs}): a call slower than the degrade latency must still be able to answer`,
    );
  return problems;
}

/**
 * Whether `variable` is given a value, by the environment or by the JSON file `file` (as
 * {@link loadSettings} reads them: an empty value is none), rather than left to its default.
 */
export function settingGiven(variable: string, env: NodeJS.ProcessEnv = process.env, file = env.SLUICE_CONFIG): boolean {
  if (env[variable] !== undefined && env[variable] !== '') return true;
  if (!file) return false;
  const fromFile = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)[variable];
  return fromFile !== undefined && fromFile !== '';
}

/** Variables sluice reads that are not settings: the CLI's settings file and `send --key`. */
const OTHER_VARIABLES = new Set(['SLUICE_CONFIG', 'SLUICE_API_KEY']);

/**
 * `SLUICE_*` variables of `env` that sluice does not read, e.g. a misspelled `SLUICE_PROT`: they are
 * ignored, so `config check` and `serve` name them (a file's unknown keys are an error instead).
 */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.keys(env).filter(
    (name) =>
      // SLUICE_TEST_*: the test suite's servers (test/support/servers.ts), set in a developer's shell.
      name.startsWith('SLUICE_') && !name.startsWith('SLUICE_TEST_') && !SETTING_VARIABLES.has(name) && !OTHER_VARIABLES.has(name),
  );
}

/** Every setting as `VARIABLE=value`, secrets masked: what `sluice config check` prints. */
export function describeSettings(settings: Settings): string[] {
  return (Object.entries(SETTINGS) as [SettingName, SettingSpec][]).map(([name, s]) => {
    const value = settings[name];
    const shown = Array.isArray(value) ? value.join(',') : String(value);
    return `${s.env}=${s.secret && shown ? (s.env.endsWith('_URL') ? maskUrl(shown) : '***') : shown}`;
  });
}
