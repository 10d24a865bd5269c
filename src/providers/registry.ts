/**
 * Builds a Provider from its stored row: `{id, kind, channel, config, secret}`. `config` holds the
 * plain settings (shown by the admin API), `secret` the credentials (stored encrypted, never shown).
 * A missing or malformed field fails here, at load time, with an Error naming the provider and the
 * field (`provider "sms-main" (aliyun-sms): config.signName is required`), never the value. What
 * each kind takes is its descriptor's (`kinds.ts`; docs/operations.md lists them).
 */
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import { type Clock, systemClock } from '../limiter/clock.js';
import { isProviderKind, PROVIDER_KINDS, type ProviderKind, providerKind } from './kinds.js';
import type { Provider } from './provider.js';
import { ProviderConfigReader } from './provider-config.js';
import type { LineSink, ProviderKindDescriptor } from './provider-kind.js';

export interface ProviderSpec {
  id: string;
  kind: ProviderKind | string;
  channel: Channel;
  config: Record<string, unknown>;
  secret: Record<string, string>;
}

/** What the process supplies rather than the stored row. */
export interface ProviderDependencies {
  /** Signing timestamps (Tencent, Aliyun, Feishu, http). */
  clock?: Clock;
  /** The console provider's output (stdout by default). */
  consoleOut?: LineSink;
  /** Resolves the vendor's host for each new connection (the build context's `lookup`). */
  lookup?: LookupFunction;
}

export function createProvider(spec: ProviderSpec, deps: ProviderDependencies = {}): Provider {
  const { descriptor, read } = readerFor(spec);
  return build(descriptor, spec, deps, read);
}

/**
 * What the admin API and the CLI run before storing a provider: {@link createProvider}'s checks,
 * and also no field the kind does not read, so a misspelt `timeOutMs` is refused instead of
 * silently leaving the default. (Loading a stored row stays lenient: a row written by hand or by
 * another build must not stop its channel.) Throws an Error naming the provider and the fields.
 */
export function checkProviderSpec(spec: ProviderSpec): void {
  const { descriptor, read } = readerFor(spec);
  descriptor.checkNew?.(read, spec.id);
  const client = build(descriptor, spec, {}, read);
  void client.close?.();
  const unread = read.unreadFields();
  if (unread.length > 0) {
    throw new Error(
      `provider "${spec.id}" (${spec.kind}): ${unread.join(', ')} ${unread.length === 1 ? 'is' : 'are'} not read by this kind (misspelt, another kind's, or needing another field)`,
    );
  }
}

/** A stored provider's config as listings show it (a kind may mask part of it). */
export function listedProviderConfig(kind: string, config: Record<string, unknown>): Record<string, unknown> {
  return providerKind(kind)?.listedConfig?.(config) ?? config;
}

/** The config fields of a kind whose change takes the secret again (none for a kind this build has no row for). */
export function credentialRouteFields(kind: string): readonly string[] {
  return providerKind(kind)?.credentialRoute ?? [];
}

function readerFor(spec: ProviderSpec): { descriptor: ProviderKindDescriptor; read: ProviderConfigReader } {
  if (typeof spec.id !== 'string' || spec.id === '') throw new Error('provider: id is required (a non-empty string)');
  const descriptor = isProviderKind(spec.kind) ? providerKind(spec.kind) : undefined;
  if (!descriptor) throw new Error(`provider "${spec.id}": unknown kind "${String(spec.kind)}" (one of ${PROVIDER_KINDS.join(', ')})`);
  if (descriptor.channel !== undefined && spec.channel !== descriptor.channel) {
    throw new Error(`provider "${spec.id}" (${descriptor.kind}): channel must be "${descriptor.channel}", not "${String(spec.channel)}"`);
  }
  return { descriptor, read: new ProviderConfigReader(spec.id, descriptor.kind, spec.config ?? {}, spec.secret ?? {}) };
}

function build(descriptor: ProviderKindDescriptor, spec: ProviderSpec, deps: ProviderDependencies, read: ProviderConfigReader): Provider {
  return descriptor.build(read, {
    id: spec.id,
    channel: spec.channel,
    clock: deps.clock ?? systemClock,
    consoleOut: deps.consoleOut,
    lookup: deps.lookup,
  });
}
