/**
 * Which URLs a tenant's webhook may post to. Checked when the webhook is stored and again before
 * every post (a name may resolve elsewhere later): `http:`/`https:` only, no credentials in the
 * URL, the host on the allow-list when one is set, and no loopback, private, link-local or
 * otherwise internal address unless private targets are allowed (tests, the demo, a private
 * deployment): a webhook must not become a way to reach sluice's own network.
 */
import { type LookupAddress, lookup as lookupCallback } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { isInternalAddress } from './internal-addresses.js';

export interface WebhookUrlPolicy {
  /** Loopback and private ranges allowed (`SLUICE_WEBHOOK_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** Lower-case host names (or `*.suffix`) allowed; empty: any public host. */
  allowedHosts: readonly string[];
}

function hostAllowed(host: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;
  });
}

/**
 * What is wrong with `text` as a webhook URL under `policy`, without resolving names; undefined
 * when nothing is. The problem never quotes the URL (it may carry a credential).
 */
export function webhookUrlProblem(text: string, policy: WebhookUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be http: or https:';
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials (user:password@)';
  const host = url.hostname.toLowerCase();
  if (!hostAllowed(host, policy.allowedHosts)) return 'url host is not on SLUICE_WEBHOOK_ALLOWED_HOSTS';
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || isInternalAddress(host)))
    return 'url points to a loopback or private address (allowed only with SLUICE_WEBHOOK_ALLOW_PRIVATE=true)';
  return undefined;
}

/**
 * {@link webhookUrlProblem}, then, unless private targets are allowed, every address the host
 * resolves to: a public name pointing at an internal address is refused too.
 */
export async function resolvedWebhookUrlProblem(text: string, policy: WebhookUrlPolicy): Promise<string | undefined> {
  const problem = webhookUrlProblem(text, policy);
  if (problem !== undefined || policy.allowPrivate) return problem;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return 'url host does not resolve';
  }
  return addresses.some(({ address }) => isInternalAddress(address)) ? INTERNAL_ADDRESS_REFUSED : undefined;
}

/** What a connection made through {@link guardedLookup} fails with when its host resolves inside. */
export const INTERNAL_ADDRESS_REFUSED =
  'url host resolves to a loopback or private address (allowed only with SLUICE_WEBHOOK_ALLOW_PRIVATE=true)';

/**
 * A `lookup` for the connection itself (the `lookup` option of `http.request`): resolves the host
 * as Node would and refuses internal addresses, so the address connected to is the address
 * checked. {@link resolvedWebhookUrlProblem} checks before the post, but the connection resolves
 * again, and a name that answers a public address to the check and an internal one to the
 * connection (DNS rebinding) would pass it. IP literals do not reach a lookup; the URL check
 * refuses internal ones.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookupCallback(hostname, options, (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
    if (error) return callback(error, address as string, family);
    const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
    if (addresses.some(isInternalAddress)) {
      const refused: NodeJS.ErrnoException = new Error(INTERNAL_ADDRESS_REFUSED);
      refused.code = 'EINTERNALADDRESS';
      return callback(refused, address as string, family);
    }
    callback(null, address as string, family);
  });
};
