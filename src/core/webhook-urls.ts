/**
 * Which URLs a tenant's webhook may post to. Checked when the webhook is stored and again before
 * every post (a name may resolve elsewhere later): `http:`/`https:` only, no credentials in the
 * URL, the host on the allow-list when one is set, and no loopback, private, link-local or
 * otherwise internal address (`internal-addresses.ts`) unless private targets are allowed (tests,
 * the demo, a private deployment): a webhook must not become a way to reach sluice's own network.
 * A post resolves its host once and connects to the addresses checked ({@link fixedLookup}).
 */
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
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

/** The addresses of a host name, from the process's bounded resolver (`infra/host-resolver.ts`). */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

/** Where a post goes: why it must not, or the addresses to connect to (undefined: the URL's host is an IP literal). */
export type WebhookTarget = { problem: string } | { problem?: undefined; addresses: readonly string[] | undefined };

/** What a post refused for an internal address answers. */
export const INTERNAL_ADDRESS_REFUSED =
  'url host resolves to a loopback or private address (allowed only with SLUICE_WEBHOOK_ALLOW_PRIVATE=true)';

/**
 * {@link webhookUrlProblem}, then the host resolved once: a post connects to these addresses
 * through {@link fixedLookup}, so the address checked is the address connected to, and a name that
 * answers a public address to a check and an internal one to the connection (DNS rebinding) has
 * no second answer to give. Unless private targets are allowed, a name with any internal address
 * is refused.
 */
export async function resolveWebhookTarget(text: string, policy: WebhookUrlPolicy, resolve: ResolveHost): Promise<WebhookTarget> {
  const problem = webhookUrlProblem(text, policy);
  if (problem !== undefined) return { problem };
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return { addresses: undefined };
  let addresses: readonly string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    return { problem: `url host does not resolve: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!policy.allowPrivate && addresses.some(isInternalAddress)) return { problem: INTERNAL_ADDRESS_REFUSED };
  return { addresses };
}

/**
 * What storing a webhook checks: {@link resolveWebhookTarget}'s problem, without resolving when
 * private targets are allowed (any address is then fine).
 */
export async function resolvedWebhookUrlProblem(text: string, policy: WebhookUrlPolicy, resolve: ResolveHost): Promise<string | undefined> {
  if (policy.allowPrivate) return webhookUrlProblem(text, policy);
  return (await resolveWebhookTarget(text, policy, resolve)).problem;
}

/**
 * A connection's `lookup` (the option of `net.connect` and `http.request`) that answers
 * `addresses` (those of the requested family) without asking anything.
 */
export function fixedLookup(addresses: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const usable = addresses.filter((address) => family === 0 || isIP(address) === family);
    process.nextTick(() => {
      if (usable.length === 0) {
        const none: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
        none.code = 'ENOTFOUND';
        return callback(none, '', 0);
      }
      if (options.all) {
        const all: LookupAddress[] = usable.map((address) => ({ address, family: isIP(address) }));
        return (callback as (error: null, addresses: LookupAddress[]) => void)(null, all);
      }
      callback(null, usable[0]!, isIP(usable[0]!));
    });
  };
}
