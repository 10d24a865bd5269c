/**
 * A real DNS server on a UDP socket of 127.0.0.1, for the resolver's tests: it answers A and AAAA
 * queries from a table, answers NXDOMAIN for names it does not know, and never answers the names
 * `hangs` picks (a tenant's name whose DNS does not answer). Every query is recorded.
 */
import { createSocket } from 'node:dgram';

export interface DnsRecords {
  v4?: string[];
  v6?: string[];
  /** Seconds; default 60. */
  ttl?: number;
}

export interface DnsServer {
  /** `127.0.0.1:<port>`, as `SLUICE_DNS_SERVERS` takes it. */
  readonly address: string;
  readonly records: Map<string, DnsRecords>;
  /** Names never answered. */
  hangs: (name: string) => boolean;
  /** Every query received: name (lower case) and type (`A`, `AAAA`, or the number). */
  readonly queries: { name: string; type: string }[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/** The question's name, type and the question's bytes (to copy into the answer). */
function question(message: Buffer): { name: string; type: number; bytes: Buffer } | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < message.length && message[at] !== 0) {
    const length = message[at]!;
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  if (at + 5 > message.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(at + 1), bytes: message.subarray(12, at + 5) };
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const before = groups(head);
  const after = address.includes('::') ? groups(tail) : [];
  const all = [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = Buffer.alloc(16);
  for (const [i, group] of all.entries()) bytes.writeUInt16BE(group, 2 * i);
  return bytes;
}

function answer(query: Buffer, asked: { type: number; bytes: Buffer }, records: DnsRecords | undefined): Buffer {
  const addresses = records ? ((asked.type === TYPE_A ? records.v4 : asked.type === TYPE_AAAA ? records.v6 : []) ?? []) : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  // QR, RD, RA; rcode 3 (NXDOMAIN) for an unknown name, 0 with no answers for a missing type.
  header.writeUInt16BE(records ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const answers = addresses.map((address) => {
    const data = asked.type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const record = Buffer.alloc(12);
    record.writeUInt16BE(0xc00c, 0); // the question's name
    record.writeUInt16BE(asked.type, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(records?.ttl ?? 60, 6);
    record.writeUInt16BE(data.length, 10);
    return Buffer.concat([record, data]);
  });
  return Buffer.concat([header, asked.bytes, ...answers]);
}

export async function startDnsServer(): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const server = {
    address: '',
    records: new Map<string, DnsRecords>(),
    hangs: (_name: string) => false,
    queries: [] as { name: string; type: string }[],
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (message, from) => {
    const asked = question(message);
    if (!asked) return;
    server.queries.push({ name: asked.name, type: asked.type === TYPE_A ? 'A' : asked.type === TYPE_AAAA ? 'AAAA' : String(asked.type) });
    if (server.hangs(asked.name)) return;
    socket.send(answer(message, asked, server.records.get(asked.name)), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
