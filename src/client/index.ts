/**
 * `sluice/client`: a thin, typed `fetch` client of the sluice HTTP API. Request and response types
 * are the API's own TypeBox schemas (the ones /docs/json is made from), so the client cannot drift
 * from the server; test/client/client.test.ts checks every method against the OpenAPI document.
 *
 * - **Errors are values**: every call resolves `{ok: true, status, value}` or `{ok: false, status,
 *   error: {code, message, …}}` with the stable codes of docs/errors.md (`NETWORK` when no answer
 *   came). It rejects only for a programming error (a bad base URL).
 * - **Retries** on 429 and 503 honour `Retry-After` (a wait longer than `maxRetryDelayMs`, such as
 *   a recipient's ten-minute ban, is answered at once instead), else back off exponentially with
 *   jitter. sluice consumes nothing on a 429 or a 5xx, so a retry is safe.
 * - **One Idempotency-Key per logical send**: `send` makes a key unless given one and reuses it
 *   on every retry, so a send whose answer was lost is replayed (200, same id), never doubled.
 */
import type { Static } from '@sinclair/typebox';
import type { BanLifted } from '../api/bans.js';
import type { BlacklistAdded, BlacklistBody, BlacklistPage, BlacklistRemoveBody, BlacklistRemoved } from '../api/blacklists.js';
import type { SmsPricesBody, SmsPricesView } from '../api/fraud.js';
import type { Decision, FrequencyCheckBody } from '../api/frequency.js';
import type {
  AdminMessageView,
  BanStatusView,
  MessageSearch,
  MessageSearchPage,
  MessageSummaryView,
  RulesPreviewBody,
  RulesPreviewView,
} from '../api/lookups.js';
import type { Accepted, Canceled, FeedbackBody, FeedbackView, MessageView, SendBody } from '../api/messages.js';
import type { NewProviderBody, ProviderDeleted, ProviderList, ProviderPatchBody, ProviderView } from '../api/providers.js';
import type { RuleSetBody, RuleSetView } from '../api/rules.js';
import type {
  ConsentHistory,
  RecipientSuppressions,
  SuppressBody,
  Suppressed,
  SuppressionPage,
  Unsuppressed,
} from '../api/suppressions.js';
import type {
  ApiKeyList,
  CreatedTenant,
  IssuedApiKey,
  NewTenantBody,
  TenantBacklog,
  TenantDetails,
  TenantPage,
  TenantPatchBody,
} from '../api/tenants.js';
import type { Call, ClientError, Result } from './call.js';
import { tenantConfigCalls } from './tenant-config.js';

export type { Call, ClientError, Result };
export type SendRequest = Static<typeof SendBody>;
export type FrequencyCheckRequest = Static<typeof FrequencyCheckBody>;
export type RuleSet = Static<typeof RuleSetBody>;
export type {
  FraudPolicyInput,
  FraudPolicyView,
  FraudStatusView,
  QuietHours,
  QuietHoursInput,
  RiskRuleSetInput,
  RiskRuleSetView,
  TemplateInput,
  TemplateVersion,
  WebhookEventView,
  WebhookView,
  WebhookWithSecret,
} from './tenant-config.js';
export type RulesPreviewRequest = Static<typeof RulesPreviewBody>;
export type {
  AdminMessageView,
  BanStatusView,
  BlacklistPage,
  MessageSearch,
  MessageSearchPage,
  MessageSummaryView,
  MessageView,
  ProviderView,
  RuleSetView,
  RulesPreviewView,
  SmsPricesView,
  TenantBacklog,
  TenantDetails,
  TenantPage,
};

/**
 * Every optional option also takes `undefined` (as when not given), so that
 * `apiKey: process.env.SLUICE_API_KEY` type-checks under `exactOptionalPropertyTypes`.
 */
export interface SluiceClientOptions {
  /** `http://127.0.0.1:3000`: where sluice listens. */
  baseUrl: string;
  /** A tenant's API key, for the tenant calls (`send`, `getMessage`, `cancelMessage`, `checkFrequency`). */
  apiKey?: string | undefined;
  /** The admin token (`SLUICE_ADMIN_TOKEN`), for `admin.*`. */
  adminToken?: string | undefined;
  /** Retries after the first attempt on 429, 503 and (idempotent calls) a network failure. Default 3. */
  retries?: number | undefined;
  /** The longest wait before a retry; a longer `Retry-After` is answered at once. Default 30 s. */
  maxRetryDelayMs?: number | undefined;
  /** First backoff when no `Retry-After` is given, doubled each retry (with jitter). Default 200 ms. */
  baseDelayMs?: number | undefined;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Default: a timer. Tests pass one that moves their clock. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Makes Idempotency-Keys; default `crypto.randomUUID()`. */
  newIdempotencyKey?: (() => string) | undefined;
}

const RETRIED_STATUSES = new Set([429, 503]);

/** A path segment that names nothing, or that URL resolution would climb with. */
const isDotOrEmpty = (segment: string) => segment === '' || segment === '.' || segment === '..';

export class SluiceClient {
  private readonly base: URL;
  private readonly retries: number;
  private readonly maxRetryDelayMs: number;
  private readonly baseDelayMs: number;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly newKey: () => string;

  constructor(private readonly options: SluiceClientOptions) {
    this.base = new URL(options.baseUrl);
    this.retries = options.retries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.baseDelayMs = options.baseDelayMs ?? 200;
    // Called as a method of the client, the global `fetch` would throw "Illegal invocation" in browsers.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.newKey = options.newIdempotencyKey ?? (() => crypto.randomUUID());
  }

  /** `POST /v1/messages`: 202 accepted, or 200 when the key replays an accepted message (`replayed`). */
  async send(
    message: SendRequest,
    options: { idempotencyKey?: string | undefined } = {},
  ): Promise<Result<Static<typeof Accepted> & { replayed: boolean }>> {
    const key = options.idempotencyKey ?? this.newKey();
    const result = await this.call<Static<typeof Accepted>>({
      method: 'POST',
      path: '/v1/messages',
      body: message,
      auth: 'tenant',
      headers: { 'idempotency-key': key },
      repeatable: true,
    });
    return result.ok ? { ...result, value: { ...result.value, replayed: result.status === 200 } } : result;
  }

  /**
   * `GET /v1/messages`: your tenant's messages (`{}`), or those to one recipient (`to`, with
   * `channel` and `status` to narrow), newest first; pass a page's `nextCursor` as `cursor` for the next.
   */
  listMessages(search: MessageSearch = {}): Promise<Result<MessageSearchPage>> {
    return this.call({ method: 'GET', path: '/v1/messages', query: { ...search }, auth: 'tenant', repeatable: true });
  }

  /** `GET /v1/suppressions/:channel/:recipient`: the recipient's suppressions on the channel, every category. */
  getSuppression(channel: string, recipient: string): Promise<Result<RecipientSuppressions>> {
    return this.call({ method: 'GET', path: this.suppressionPath(channel, recipient), auth: 'tenant', repeatable: true });
  }

  /** `PUT /v1/suppressions/:channel/:recipient`: suppresses (`category` default `*`, `reason` default `manual`); idempotent. */
  suppress(channel: string, recipient: string, body: Static<typeof SuppressBody> = {}): Promise<Result<Static<typeof Suppressed>>> {
    return this.call({ method: 'PUT', path: this.suppressionPath(channel, recipient), body, auth: 'tenant', repeatable: true });
  }

  /** `DELETE /v1/suppressions/:channel/:recipient`: lifts the suppression of `category` (default `*`). */
  unsuppress(channel: string, recipient: string, category?: string): Promise<Result<Static<typeof Unsuppressed>>> {
    return this.call({
      method: 'DELETE',
      path: this.suppressionPath(channel, recipient),
      query: category === undefined ? {} : { category },
      auth: 'tenant',
      repeatable: true,
    });
  }

  /** `GET /v1/suppressions`: a page of your tenant's suppressions; pass a page's `next` as `after`. */
  listSuppressions(
    page: { channel?: string; category?: string; source?: string; limit?: number; after?: string } = {},
  ): Promise<Result<SuppressionPage>> {
    return this.call({ method: 'GET', path: '/v1/suppressions', query: page, auth: 'tenant', repeatable: true });
  }

  /** `GET /v1/recipients/:channel/:recipient/consent`: the recipient's consent record in your tenant, oldest first. */
  getConsent(channel: string, recipient: string, page: { limit?: number; after?: string } = {}): Promise<Result<ConsentHistory>> {
    return this.call({
      method: 'GET',
      path: `/v1/recipients/${encodeURIComponent(channel)}/${encodeURIComponent(recipient)}/consent`,
      query: page,
      auth: 'tenant',
      repeatable: true,
    });
  }

  private suppressionPath(channel: string, recipient: string): string {
    return `/v1/suppressions/${encodeURIComponent(channel)}/${encodeURIComponent(recipient)}`;
  }

  /** `GET /v1/messages/:id`: the message, its delivery attempts. */
  getMessage(id: string): Promise<Result<MessageView>> {
    return this.call({ method: 'GET', path: `/v1/messages/${encodeURIComponent(id)}`, auth: 'tenant', repeatable: true });
  }

  /** `DELETE /v1/messages/:id`: cancels a message not yet sending (409 once it is). */
  cancelMessage(id: string): Promise<Result<Static<typeof Canceled>>> {
    return this.call({ method: 'DELETE', path: `/v1/messages/${encodeURIComponent(id)}`, auth: 'tenant', repeatable: true });
  }

  /**
   * `POST /v1/messages/:id/feedback`: the message's code was used (docs/fraud.md); it counts one
   * conversion. A repeat answers the first `confirmedAt`; another tenant's message is 404.
   */
  sendFeedback(id: string, feedback: Static<typeof FeedbackBody> = { outcome: 'confirmed' }): Promise<Result<Static<typeof FeedbackView>>> {
    return this.call({
      method: 'POST',
      path: `/v1/messages/${encodeURIComponent(id)}/feedback`,
      body: feedback,
      auth: 'tenant',
      repeatable: true,
    });
  }

  /** `POST /v1/frequency/check`: a denial is a value (`allowed: false`), like any decision. */
  checkFrequency(check: FrequencyCheckRequest): Promise<Result<Static<typeof Decision>>> {
    // Without a requestId a repeat after a lost answer would be counted again.
    return this.call({
      method: 'POST',
      path: '/v1/frequency/check',
      body: check,
      auth: 'tenant',
      repeatable: check.requestId !== undefined,
    });
  }

  /** The admin API (`adminToken`). */
  readonly admin = {
    createTenant: (body: Static<typeof NewTenantBody>): Promise<Result<Static<typeof CreatedTenant>>> =>
      this.call({ method: 'POST', path: '/v1/admin/tenants', body, auth: 'admin', repeatable: false }),
    listTenants: (page: { limit?: number; after?: string } = {}): Promise<Result<TenantPage>> =>
      this.call({ method: 'GET', path: '/v1/admin/tenants', query: page, auth: 'admin', repeatable: true }),
    getTenant: (id: string): Promise<Result<TenantDetails>> =>
      this.call({ method: 'GET', path: `/v1/admin/tenants/${encodeURIComponent(id)}`, auth: 'admin', repeatable: true }),
    updateTenant: (id: string, patch: Static<typeof TenantPatchBody>): Promise<Result<TenantDetails>> =>
      this.call({ method: 'PATCH', path: `/v1/admin/tenants/${encodeURIComponent(id)}`, body: patch, auth: 'admin', repeatable: true }),
    /** What waits to be sent on each of the tenant's channels and lanes, and each lane's oldest due message. */
    getTenantBacklog: (id: string): Promise<Result<TenantBacklog>> =>
      this.call({ method: 'GET', path: `/v1/admin/tenants/${encodeURIComponent(id)}/backlog`, auth: 'admin', repeatable: true }),
    listApiKeys: (id: string): Promise<Result<Static<typeof ApiKeyList>>> =>
      this.call({ method: 'GET', path: `/v1/admin/tenants/${encodeURIComponent(id)}/keys`, auth: 'admin', repeatable: true }),
    issueApiKey: (id: string, options: { keepOthers?: boolean } = {}): Promise<Result<Static<typeof IssuedApiKey>>> =>
      this.call({
        method: 'POST',
        path: `/v1/admin/tenants/${encodeURIComponent(id)}/keys`,
        query: { keepOthers: options.keepOthers },
        auth: 'admin',
        repeatable: false,
      }),
    setRules: (id: string, channel: string, rules: RuleSet): Promise<Result<RuleSetView>> =>
      this.call({ method: 'PUT', path: this.rulesPath(id, channel), body: rules, auth: 'admin', repeatable: true }),
    getRules: (id: string, channel: string): Promise<Result<RuleSetView>> =>
      this.call({ method: 'GET', path: this.rulesPath(id, channel), auth: 'admin', repeatable: true }),
    liftBan: (
      id: string,
      channel: string,
      to: string,
      options: { resetCounts?: boolean } = {},
    ): Promise<Result<Static<typeof BanLifted>>> =>
      this.call({
        method: 'DELETE',
        path: this.banPath(id, channel, to),
        query: { resetCounts: options.resetCounts },
        auth: 'admin',
        repeatable: true,
      }),
    /** A recipient's ban and each rule's count now (a peek: consumes and records nothing). */
    getBanStatus: (id: string, channel: string, to: string): Promise<Result<BanStatusView>> =>
      this.call({ method: 'GET', path: this.banPath(id, channel, to), auth: 'admin', repeatable: true }),
    /** Replays `sends` against the given (or the channel's stored) rules in a limiter of its own: nothing recorded. */
    previewRules: (id: string, channel: string, body: RulesPreviewRequest): Promise<Result<RulesPreviewView>> =>
      this.call({ method: 'POST', path: `${this.rulesPath(id, channel)}/preview`, body, auth: 'admin', repeatable: true }),
    /** A tenant's messages (`{}`), or those to one recipient (`to`), newest first; pass a page's `nextCursor` as `cursor` for the next. */
    searchMessages: (id: string, search: MessageSearch): Promise<Result<MessageSearchPage>> =>
      this.call({
        method: 'GET',
        path: `/v1/admin/tenants/${encodeURIComponent(id)}/messages`,
        query: { ...search },
        auth: 'admin',
        repeatable: true,
      }),
    /** A tenant's message with its attempts, receipt and status callbacks (404 when it is not that tenant's). */
    getMessage: (id: string, messageId: string): Promise<Result<AdminMessageView>> =>
      this.call({
        method: 'GET',
        path: `/v1/admin/tenants/${encodeURIComponent(id)}/messages/${encodeURIComponent(messageId)}`,
        auth: 'admin',
        repeatable: true,
      }),
    /** A tenant's blacklist (`tenantId`), or the global one (`'global'`). */
    addToBlacklist: (scope: string, body: Static<typeof BlacklistBody>): Promise<Result<Static<typeof BlacklistAdded>>> =>
      this.call({ method: 'POST', path: this.blacklistPath(scope), body, auth: 'admin', repeatable: true }),
    removeFromBlacklist: (scope: string, body: Static<typeof BlacklistRemoveBody>): Promise<Result<Static<typeof BlacklistRemoved>>> =>
      this.call({ method: 'DELETE', path: this.blacklistPath(scope), body, auth: 'admin', repeatable: true }),
    listBlacklist: (scope: string, page: { channel?: string; limit?: number; after?: string } = {}): Promise<Result<BlacklistPage>> =>
      this.call({ method: 'GET', path: this.blacklistPath(scope), query: page, auth: 'admin', repeatable: true }),
    /** The SMS prices every tenant's spend cap is estimated with (docs/fraud.md). */
    setSmsPrices: (body: Static<typeof SmsPricesBody>): Promise<Result<SmsPricesView>> =>
      this.call({ method: 'PUT', path: '/v1/admin/prices/sms', body, auth: 'admin', repeatable: true }),
    getSmsPrices: (): Promise<Result<SmsPricesView>> =>
      this.call({ method: 'GET', path: '/v1/admin/prices/sms', auth: 'admin', repeatable: true }),
    createProvider: (body: Static<typeof NewProviderBody>): Promise<Result<ProviderView>> =>
      this.call({ method: 'POST', path: '/v1/admin/providers', body, auth: 'admin', repeatable: false }),
    listProviders: (filter: { scope?: string; channel?: string } = {}): Promise<Result<Static<typeof ProviderList>>> =>
      this.call({ method: 'GET', path: '/v1/admin/providers', query: filter, auth: 'admin', repeatable: true }),
    updateProvider: (id: string, patch: Static<typeof ProviderPatchBody>): Promise<Result<ProviderView>> =>
      this.call({ method: 'PATCH', path: `/v1/admin/providers/${encodeURIComponent(id)}`, body: patch, auth: 'admin', repeatable: true }),
    deleteProvider: (id: string): Promise<Result<Static<typeof ProviderDeleted>>> =>
      this.call({ method: 'DELETE', path: `/v1/admin/providers/${encodeURIComponent(id)}`, auth: 'admin', repeatable: true }),
  };

  /** Key revocation, risk rule sets, SMS pumping protection, templates, quiet hours and webhooks of a tenant (`adminToken`). */
  readonly tenantConfig = tenantConfigCalls(<T>(call: Call) => this.call<T>(call));

  private rulesPath(id: string, channel: string): string {
    return `/v1/admin/tenants/${encodeURIComponent(id)}/rules/${encodeURIComponent(channel)}`;
  }

  private banPath(id: string, channel: string, to: string): string {
    return `/v1/admin/tenants/${encodeURIComponent(id)}/bans/${encodeURIComponent(channel)}/${encodeURIComponent(to)}`;
  }

  private blacklistPath(scope: string): string {
    return scope === 'global' ? '/v1/admin/blacklist' : `/v1/admin/tenants/${encodeURIComponent(scope)}/blacklist`;
  }

  private async call<T>(call: Call): Promise<Result<T>> {
    // Ids are encoded as path segments, but `.` and `..` stay as they are and URL resolution
    // would climb with them: `tenants/../blacklist` is the global list. Such an id names nothing.
    if (call.path.split('/').slice(1).some(isDotOrEmpty)) {
      return { ok: false, status: 0, error: { code: 'INVALID_REQUEST', message: `an id in ${call.path} is empty, . or ..` } };
    }
    const url = new URL(call.path, this.base);
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const token = call.auth === 'admin' ? this.options.adminToken : this.options.apiKey;
    const headers: Record<string, string> = { ...call.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method: call.method, headers, ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }) };
    for (let attempt = 0; ; attempt++) {
      let result: Result<T>;
      let retryAfterMs: number | undefined;
      try {
        const response = await this.fetch(url, init);
        const text = await response.text();
        const body: unknown = text ? JSON.parse(text) : undefined;
        if (response.ok) return { ok: true, status: response.status, value: body as T };
        const error = (body as { error?: ClientError } | undefined)?.error ?? { code: 'INTERNAL', message: text.slice(0, 200) };
        result = { ok: false, status: response.status, error };
        if (!RETRIED_STATUSES.has(response.status)) return result;
        const header = Number(response.headers.get('retry-after'));
        if (Number.isFinite(header) && header > 0) retryAfterMs = header * 1000;
      } catch (failure) {
        result = { ok: false, status: 0, error: { code: 'NETWORK', message: (failure as Error).message } };
        if (!call.repeatable) return result;
      }
      if (attempt >= this.retries) return result;
      const delay = retryAfterMs ?? Math.ceil(this.baseDelayMs * 2 ** attempt * (0.5 + Math.random() / 2));
      if (delay > this.maxRetryDelayMs) return result;
      await this.sleep(delay);
    }
  }
}
