/**
 * What sluice knows about one vendor integration, in one place: the row in `kinds.ts` that the
 * storage type, the admin API's enum, the registry, the admin listings and the receipt endpoint
 * all read.
 */
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/clock.js';
import type { Provider } from './provider.js';
import type { ProviderConfigReader } from './provider-config.js';
import type { ReceiptFormat } from './receipt.js';

/** Where the console provider writes: stdout by default. */
export interface LineSink {
  write(chunk: string): unknown;
}

/** What a kind's builder gets besides the stored row's config and secret. */
export interface ProviderBuildContext {
  id: string;
  channel: Channel;
  /** Signing timestamps (Tencent, Aliyun, Feishu, http). */
  clock: Clock;
  /** The console provider's output (stdout when absent). */
  consoleOut?: LineSink | undefined;
  /**
   * Resolves the vendor's host for each new connection: the process's bounded resolver (for the
   * provider's owner), so a host a tenant controls never reaches `dns.lookup` and libuv's thread
   * pool. Absent (checks before storing, tests): `dns.lookup`.
   */
  lookup?: LookupFunction | undefined;
}

/** The fields of `config` or `secret` a kind reads: those it cannot do without, and the others. */
export interface ProviderFields {
  readonly required: readonly string[];
  readonly optional: readonly string[];
}

/**
 * One provider kind. Its module exports it; `kinds.ts` lists it once. The builder reads every
 * field through the reader, which names the provider and the field (never the value) in its
 * errors and records what was read, so a field nobody reads is refused before storing.
 */
export interface ProviderKindDescriptor<K extends string = string> {
  /** The name a provider row stores in `kind`. */
  readonly kind: K;
  /** The one channel its vendor sends on; undefined: any channel (the console demo). */
  readonly channel: Channel | undefined;
  /** Plain settings, shown by the admin API. Every kind also takes `timeoutMs` (per request, default 10 000). */
  readonly config: ProviderFields;
  /** Credentials: sealed at rest, never shown. */
  readonly secret: ProviderFields;
  /**
   * Config fields that say where the stored credentials go, and how safely (in clear, to an
   * unchecked certificate): a change of one must bring the secret again, so moving credentials
   * takes someone who knows them.
   */
  readonly credentialRoute: readonly string[];
  /** The config as listings show it, when some of it must not be shown (default: as stored). */
  readonly listedConfig?: (config: Record<string, unknown>) => Record<string, unknown>;
  /** Refusals for a spec about to be stored, beyond building (what older builds took and stored rows may still hold). */
  readonly checkNew?: (read: ProviderConfigReader, id: string) => void;
  /**
   * How its vendor pushes delivery receipts (`POST /v1/receipts/:providerId`); absent: the kind
   * takes none, and no receipt token is issued for its providers.
   */
  readonly receipts?: ReceiptFormat;
  /** The client of a spec whose id, kind and channel are checked. */
  build(read: ProviderConfigReader, context: ProviderBuildContext): Provider;
}

/** Declares a kind, keeping its name's literal type for the table's `ProviderKind`. */
export const defineProviderKind = <const K extends string>(descriptor: ProviderKindDescriptor<K>): ProviderKindDescriptor<K> => descriptor;
