/**
 * Parsers of command-line arguments and option texts. They check form only (digits, a JSON
 * object, `WINDOW:LIMIT`); ranges and enums are the API schema's, checked by `checkBody`.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { CHANNELS, type Channel, isChannel } from '../core/channels.js';
import { jsonSyntaxProblem, SluiceError } from '../core/errors.js';

/** A list for help texts: `sms, email or webhook`. */
export const oneOf = (values: readonly string[]): string =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

export const channelArg = (value: string): Channel => {
  if (!isChannel(value)) throw new InvalidArgumentError(`"${value}" is not a channel: use one of ${CHANNELS.join(', ')}`);
  return value;
};

/** Digits only: `parseInt` would read `1.5` as 1 and `abc` as NaN. The range is the API schema's. */
export const integerArg = (value: string): number => {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer');
  return Number(value);
};

/**
 * `--send-at`: what the API takes (an ISO 8601 date-time with its offset, or epoch milliseconds),
 * refused here with the expected form rather than the schema's `must match format "date-time"`.
 */
export const sendAtArg = (value: string): string | number => {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) && !Number.isNaN(Date.parse(text))) {
    // The API's date-time has seconds: supply them when only minutes were given.
    return /T\d{2}:\d{2}(Z|[+-])/i.test(text) ? text.replace(/(T\d{2}:\d{2})/i, '$1:00') : text;
  }
  throw new InvalidArgumentError(
    `"${value}" is not a time sluice takes: use ISO 8601 with a date, "T", a time and an offset (2026-12-04T14:19:00+08:00, 2026-12-04T06:19:00Z) or epoch milliseconds`,
  );
};

/** Commander's accumulator for a repeated option. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A JSON object from an option's text; `what` names the option in the error. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SluiceError('INVALID_REQUEST', `${what} is ${jsonSyntaxProblem(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new SluiceError('INVALID_REQUEST', `${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** Credentials: from a file or an environment variable, never the command line (shell history, `ps`). */
export function readSecret(options: { secretFile?: string; secretEnv?: string }): Record<string, unknown> | undefined {
  if (options.secretFile) {
    let text: string;
    try {
      text = readFileSync(options.secretFile, 'utf8');
    } catch (error) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `cannot read --secret-file ${options.secretFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return parseJsonObject(text, `--secret-file ${options.secretFile}`);
  }
  if (options.secretEnv) {
    const text = process.env[options.secretEnv];
    if (text === undefined || text === '')
      throw new SluiceError('INVALID_REQUEST', `--secret-env: the environment variable ${options.secretEnv} is not set`);
    return parseJsonObject(text, `--secret-env ${options.secretEnv}`);
  }
  return undefined;
}

/** The form of a rule on the command line, for help texts and errors. */
const RULE_FORM = 'WINDOW_SECONDS:LIMIT[:BAN_SECONDS[:ALGORITHM]]';

/**
 * `60:3:600` or `60:3` or `60:3:600:sliding-counter` → a rule (seconds). Only the form is checked
 * here, so `60:0:0` is refused for its limit, as the API refuses it, not as a malformed rule.
 */
export function parseRule(spec: string, index: number): { windowSeconds: number; limit: number; banSeconds: number; algorithm?: string } {
  const parts = spec.split(':');
  const [window, limit, ban = '0', algorithm] = parts;
  const numbers = [window, limit, ban].map((part) => (part !== undefined && /^-?\d+$/.test(part) ? Number(part) : undefined));
  if (parts.length < 2 || parts.length > 4 || numbers.includes(undefined) || algorithm === '') {
    throw new SluiceError('INVALID_REQUEST', `rules[${index}]: "${spec}" is not ${RULE_FORM}`);
  }
  const [windowSeconds, limitValue, banSeconds] = numbers as [number, number, number];
  return { windowSeconds, limit: limitValue, banSeconds, ...(algorithm ? { algorithm } : {}) };
}
