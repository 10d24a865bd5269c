/**
 * Which IP addresses a tenant's webhook must not reach: every range IANA's special-purpose address
 * registries (IPv4 and IPv6) mark as not globally reachable, multicast, and IPv6 outside global
 * unicast (2000::/3). An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`) is judged by that
 * IPv4 address too: `[::ffff:7f00:1]` is loopback however it is spelt.
 */
import { BlockList, isIP } from 'node:net';

const INTERNAL_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the limited broadcast address
] as const)
  INTERNAL_V4.addSubnet(net, prefix, 'ipv4');

/** Inside global unicast (2000::/3), the ranges that are not globally reachable. */
const INTERNAL_V6 = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation
] as const)
  INTERNAL_V6.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of an IPv6 literal (`::`, an IPv4 tail and a zone id allowed); undefined if it is none. */
export function ipv6Bytes(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  if (isIP(address) !== 6) return undefined;
  const halves = address.split('::');
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const groups = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

const v4 = (bytes: Uint8Array, at: number, flip = 0) => [0, 1, 2, 3].map((i) => (bytes[at + i]! ^ flip).toString()).join('.');
const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
const word = (bytes: Uint8Array, at: number) => (bytes[at]! << 8) | bytes[at + 1]!;
/** ::ffff:a.b.c.d */
const isMapped = (bytes: Uint8Array) => zeros(bytes, 0, 10) && word(bytes, 10) === 0xffff;
/** 64:ff9b::a.b.c.d, NAT64's well-known prefix */
const isNat64 = (bytes: Uint8Array) => word(bytes, 0) === 0x64 && word(bytes, 2) === 0xff9b && zeros(bytes, 4, 12);

/** The IPv4 addresses an IPv6 address carries (none for most; Teredo's server, then its client). */
export function embeddedIpv4(bytes: Uint8Array): string[] {
  // ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated)
  if (isMapped(bytes) || isNat64(bytes) || (zeros(bytes, 0, 10) && word(bytes, 10) === 0)) return [v4(bytes, 12)];
  if (zeros(bytes, 0, 8) && word(bytes, 8) === 0xffff && word(bytes, 10) === 0) return [v4(bytes, 12)];
  // 2002:AABB:CCDD::/48 (6to4: the IPv4 address in bits 16..48)
  if (word(bytes, 0) === 0x2002) return [v4(bytes, 2)];
  // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (Teredo: the server, and the client inverted)
  if (word(bytes, 0) === 0x2001 && word(bytes, 2) === 0) return [v4(bytes, 4), v4(bytes, 12, 0xff)];
  return [];
}

/**
 * Whether `address` (an IP literal, brackets allowed) is loopback, private, link-local, multicast,
 * reserved or otherwise not globally reachable; false for a name.
 */
export function isInternalAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return INTERNAL_V4.check(bare, 'ipv4');
  const bytes = family === 6 ? ipv6Bytes(bare) : undefined;
  if (!bytes) return false;
  if (embeddedIpv4(bytes).some((inner) => INTERNAL_V4.check(inner, 'ipv4'))) return true;
  // IPv4-mapped and NAT64 addresses reach their (public, checked above) IPv4 address.
  if (isMapped(bytes) || isNat64(bytes)) return false;
  // Outside 2000::/3 nothing is global unicast: ::/8, 100::/64, 5f00::/16, fc00::/7, fe80::/10, fec0::/10, ff00::/8...
  if ((bytes[0]! & 0xe0) !== 0x20) return true;
  return INTERNAL_V6.check(bare.replace(/%.*$/, ''), 'ipv6');
}
