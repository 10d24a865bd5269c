/** How sluice resolves the hosts tenants control (webhook endpoints, their providers): part of {@link SETTINGS}. */
import { isIP } from 'node:net';
import { spec } from './spec.js';

/** `ip`, `ip:port` or `[ipv6]:port`, as `dns.Resolver.setServers` takes them. */
function dnsServerProblem(servers: string[]): string | undefined {
  const bad = servers.filter((server) => {
    if (isIP(server)) return false;
    const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(server);
    const host = match?.[1] ?? match?.[2];
    return !match || !host || !isIP(host) || Number(match[3]) < 1 || Number(match[3]) > 65_535;
  });
  return bad.length > 0 ? `SLUICE_DNS_SERVERS must list IP addresses, optionally with a port (got ${bad.join(', ')})` : undefined;
}

export const DNS_SETTINGS = {
  dnsServers: spec({
    env: 'SLUICE_DNS_SERVERS',
    kind: 'list',
    default: [],
    check: dnsServerProblem,
    description:
      'Comma-separated DNS servers (`10.0.0.2`, `10.0.0.2:5353`, `[fd00::2]:53`) for the hosts tenants control: webhook endpoints and providers. Empty: those of /etc/resolv.conf. /etc/hosts is not read (IP literals and `localhost` are answered directly).',
  }),
  dnsTimeoutMs: spec({
    env: 'SLUICE_DNS_TIMEOUT_MS',
    kind: 'int',
    default: 5000,
    range: [100, 60_000],
    description: 'How long resolving one such host may take, waiting for its turn included; then the post or send fails (retried).',
  }),
  dnsLookupsPerTenant: spec({
    env: 'SLUICE_DNS_LOOKUPS_PER_TENANT',
    kind: 'int',
    default: 2,
    range: [1, 16],
    description:
      "Host names one tenant may have being resolved at once; its other lookups wait their turn. Lookups of one name share one query, and none uses libuv's thread pool.",
  }),
};
