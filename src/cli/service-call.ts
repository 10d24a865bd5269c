/** The commands that act as a tenant (`send`, `messages list`) call the running service's API with the tenant's key. */
import { ERROR_CODES, type ErrorCode, SluiceError } from '../core/errors.js';
import type { CommandContext } from './context.js';

/** `--url`, or http://SLUICE_HOST:SLUICE_PORT (a wildcard host is asked on loopback). */
export function serviceBase(context: CommandContext, url: string | undefined): string {
  if (url) return url;
  const settings = context.settings();
  return `http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${settings.port}`;
}

/**
 * One call with the tenant's key; the answer's JSON, or a SluiceError with the API's code and
 * message (a refusal that passes says when: the body's retryAfterSeconds, or Retry-After).
 */
export async function callService<T>(
  base: string,
  request: { method: 'GET' | 'POST'; path: string; key: string; body?: unknown; headers?: Record<string, string> },
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(new URL(request.path, base), {
      method: request.method,
      headers: {
        Authorization: `Bearer ${request.key}`,
        ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
  } catch (error) {
    throw new SluiceError(
      'UNAVAILABLE',
      `no sluice answers at ${base} (start it with \`sluice serve\`, or pass --url): ${(error as Error).message}`,
    );
  }
  const answer = (await response.json()) as T & { error?: { code: ErrorCode; message: string; retryAfterSeconds?: number } };
  if (answer.error) {
    const retryAfter = answer.error.retryAfterSeconds ?? (Number(response.headers.get('retry-after')) || undefined);
    const wait = retryAfter === undefined ? '' : ` (retry in ${retryAfter} s)`;
    throw new SluiceError(answer.error.code in ERROR_CODES ? answer.error.code : 'INTERNAL', `${answer.error.message}${wait}`);
  }
  return answer;
}
