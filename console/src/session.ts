/**
 * The admin token of a signed-in console. It lives in memory; only when the operator asks, in
 * sessionStorage too (this tab, until it closes), so a reload does not sign out. Never in a URL,
 * a cookie or localStorage: it is sent only as `Authorization: Bearer` by `sluice/client`.
 */
import { SluiceClient } from '../../src/client/index.js';

const STORAGE_KEY = 'sluice.console.adminToken';

/**
 * A client of this origin's API with the admin token; short retries, so a screen never waits long.
 * `onRefused`: told when the API answers 401 (the token was rotated or is wrong), so the session
 * ends instead of every screen showing the refusal.
 */
export function clientFor(adminToken: string, onRefused?: () => void): SluiceClient {
  const watched: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 401) onRefused?.();
    return response;
  };
  return new SluiceClient({ baseUrl: window.location.origin, adminToken, retries: 2, maxRetryDelayMs: 2000, fetch: watched });
}

/** The token this tab kept, if the operator chose to keep it. */
export function keptToken(): string | undefined {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function keepToken(token: string | undefined): void {
  try {
    if (token === undefined) window.sessionStorage.removeItem(STORAGE_KEY);
    else window.sessionStorage.setItem(STORAGE_KEY, token);
  } catch {
    // Storage refused (private mode, a policy): the token stays in memory only.
  }
}

/**
 * The Prometheus text of this origin's `GET /metrics` (it needs no token: none is sent), for the
 * live charts; rejects on a failed answer so the page shows its alert.
 */
export async function fetchMetrics(): Promise<string> {
  const response = await fetch('/metrics', { credentials: 'omit' });
  if (!response.ok) throw new Error(`GET /metrics: HTTP ${response.status}`);
  return response.text();
}
