import type { Channel } from '../core/channels.js';
import type { FraudFlag } from './fraud-policy.js';
import type { RenderBudget } from './render-budget.js';
import type { RenderedTemplate, VendorTemplate } from './templates.js';

/** Which claim goes first under a saturated pace: `transactional` (OTPs, alerts) before `bulk` (campaigns). */
export const PRIORITIES = ['transactional', 'bulk'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** A send request as the caller gave it (HTTP body, CLI flags or a test), before validation. */
export interface SendRequest {
  channel: string;
  to: string;
  /** A template stored for the tenant and channel. */
  template?: string;
  /** SMS: the vendor's own template code, passed through with `params` (no stored template). */
  vendorTemplate?: string;
  /** A stored template's params (numbers for its `number` params), or a vendor template's. */
  params?: Record<string, string | number>;
  subject?: string;
  body?: string;
  html?: string;
  /** ISO 8601 time or epoch ms at which to send; absent: now. */
  sendAt?: string | number;
  /** Absent: `transactional` for a single send, `bulk` in a batch. */
  priority?: Priority;
  /** The tenant's name for the kind of send (`marketing`…): suppressions of this category apply, besides those of every one. */
  category?: string;
}

/** The tenant as the chain sees it (from the config cache). */
export interface TenantView {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  qpsLimit: number | null;
}

/** What validation produces: the message to store. */
export interface ValidatedMessage {
  channel: Channel;
  /** Where the message is delivered: E.164 phone, email as written with its domain lower-cased, or webhook target. */
  recipient: string;
  /** The recipient's canonical key (`normalizeRecipient`'s `key`): what frequency rules and blacklists are keyed on. */
  recipientKey: string;
  /**
   * What the provider sends. With a stored template: its rendered texts, the version pinned
   * (`stored`) and the vendor templates; `template` is then absent (it is a send's
   * `vendorTemplate`, the vendor's code passed through).
   */
  payload: {
    template?: string;
    params?: Record<string, string | number>;
    subject?: string;
    body?: string;
    html?: string;
    stored?: { name: string; version: number };
    vendor?: Record<string, VendorTemplate>;
    /** The send's category, carried with the message so the last check before the provider reads it. */
    category?: string;
  };
  priority: Priority;
  /** When to send (epoch ms); `now` for immediate sends. */
  dueAt: number;
  scheduled: boolean;
  /** Set when a step moved `dueAt` later than asked (`quiet-hours`): the answer says so. */
  deferredBy?: 'quiet-hours';
  /** An SMS recipient's country (ISO 3166 alpha-2) as read by validation; undefined for other channels and non-geographic numbers. */
  region: string | undefined;
  /** What SMS pumping protection left on the message (the `fraud` step); absent when it had nothing to say. */
  fraud?: MessageFraud;
}

/** What the `fraud` step writes on an accepted message. */
export interface MessageFraud {
  /** The estimated cost charged to the tenant's month, in millionths of the prices' currency; absent: nothing charged. */
  costMicros?: number;
  /** What a rule in monitor mode would have refused: the lines on the message's timeline. */
  flags?: FraudFlag[];
}

/** The answer when a request is accepted (or an idempotent replay of an accepted one). */
export interface AdmissionOutcome {
  id: string;
  status: string;
  /** True when this is the message accepted earlier under the same Idempotency-Key: 200, not 202. */
  replayed: boolean;
}

/** State carried through one pass of the chain. Interceptors fill it in order. */
export interface AdmissionContext {
  /** The message id, made before the chain runs: also the limiter's request id. */
  readonly id: string;
  /** Decision time (epoch ms), from the injected clock. */
  readonly now: number;
  /** The clear API key from `Authorization: Bearer …` (never logged). */
  readonly apiKey: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** With an Idempotency-Key: SHA-256 of the canonical request (the same key with another body is a CONFLICT). */
  readonly requestHash: string | undefined;
  readonly request: SendRequest;
  tenant?: TenantView;
  /** Set by the template step when the send names a stored template: validation takes its content. */
  rendered?: RenderedTemplate;
  /** In a batch: what its renders may take together, shared by its messages' contexts. */
  readonly renderBudget?: RenderBudget;
  message?: ValidatedMessage;
  outcome?: AdmissionOutcome;
}
