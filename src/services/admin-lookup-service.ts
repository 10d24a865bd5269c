/**
 * The admin lookups the console needs (contract: `AdminLookupService`): a tenant's recent messages
 * or those to one recipient, one message's timeline, a recipient's ban and counts, and the rules dry run. They
 * read and never change: the ban lookup peeks, the dry run replays in a store of its own. Every
 * query carries the tenant of the path, so one tenant's lookups never show another's data.
 */
import type { FraudFlag } from '../admission/fraud-policy.js';
import { frequencySubject } from '../admission/interceptors/frequency.js';
import type { Channel } from '../core/channels.js';
import { SluiceError, unavailableUnlessSluiceError } from '../core/errors.js';
import { normalizeRecipient, readOnEveryChannel } from '../core/recipients.js';
import { traceIdOf } from '../core/tracing.js';
import type { Clock, Limiter } from '../limiter/index.js';
import type { Message, MessagesRepository } from '../storage/repositories/messages.js';
import { type RulesRepository, toLimiterRule } from '../storage/repositories/rules.js';
import type { TenantsRepository } from '../storage/repositories/tenants.js';
import type { WebhookEventsRepository } from '../storage/repositories/webhook-events.js';
import type { WebhooksRepository } from '../storage/repositories/webhooks.js';
import type { AdminLookupService, PreviewInput } from './contracts.js';
import type { AdminMessageView, BanStatusView, MessageSearch, MessageSearchPage, RulesPreviewView } from './lookup-views.js';
import { messageView } from './message-service.js';
import { checkRules } from './rule-administration.js';
import { replaySends } from './rules-preview.js';
import type { RuleView } from './views.js';
import { eventView } from './webhook-administration.js';

export interface AdminLookupDeps {
  tenants: Pick<TenantsRepository, 'get'>;
  rules: Pick<RulesRepository, 'get'>;
  messages: Pick<MessagesRepository, 'searchByRecipient' | 'listRecent' | 'findById' | 'listAttempts'>;
  webhooks: Pick<WebhooksRepository, 'list'>;
  webhookEvents: Pick<WebhookEventsRepository, 'listForMessage'>;
  /** The live limiter (Redis or in process), for peeks only. */
  limiter: Pick<Limiter, 'peek'>;
  clock: Clock;
  defaultRegion: string;
}

/** Search pages: 50 by default, at most 200. */
export const SEARCH_LIMITS = { default: 50, max: 200 } as const;

const iso = (ms: number) => new Date(ms).toISOString();

export class AdminLookups implements AdminLookupService {
  constructor(private readonly deps: AdminLookupDeps) {}

  private async requireTenant(id: string): Promise<void> {
    if (!(await this.deps.tenants.get(id).catch(unavailableUnlessSluiceError))) throw new SluiceError('NOT_FOUND', 'no such tenant');
  }

  async searchMessages(tenantId: string, search: MessageSearch): Promise<MessageSearchPage> {
    const limit = search.limit ?? SEARCH_LIMITS.default;
    if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMITS.max) {
      throw new SluiceError('INVALID_REQUEST', `limit: ${limit} is not an integer from 1 to ${SEARCH_LIMITS.max}`, {
        details: { field: 'limit' },
      });
    }
    const beforeId = search.cursor === undefined ? undefined : decodeCursor(search.cursor);
    if (search.to === undefined) return this.listRecent(tenantId, search, limit, beforeId);
    const to = search.to;
    // Stored recipients are the delivery form admission wrote: the same normaliser reads `to`.
    const readings = search.channel
      ? ((result) => (result.ok ? [{ channel: search.channel!, recipient: result.recipient }] : []))(
          normalizeRecipient(search.channel, to, this.deps.defaultRegion),
        )
      : readOnEveryChannel(to, this.deps.defaultRegion);
    if (readings.length === 0) {
      const what = search.channel ? `a ${search.channel} recipient` : 'a recipient of any channel';
      throw new SluiceError('INVALID_REQUEST', `to: "${to.slice(0, 40)}" is not ${what}`, { details: { field: 'to' } });
    }
    await this.requireTenant(tenantId);
    // One range scan per reading (a text may read on two channels), merged newest first.
    const pages = await Promise.all(
      readings.map((reading) =>
        this.deps.messages
          .searchByRecipient({
            tenantId,
            recipient: reading.recipient,
            channel: reading.channel,
            ...(search.status === undefined ? {} : { status: search.status }),
            ...(beforeId === undefined ? {} : { beforeId }),
            limit: limit + 1,
          })
          .catch(unavailableUnlessSluiceError),
      ),
    );
    return pageOf(
      pages.flat().sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)),
      limit,
    );
  }

  /**
   * The tenant's messages, newest first: one range scan of an index on (tenant, id). A filter on
   * channel or status would read on past every row it drops, as many as the tenant has: refused.
   */
  private async listRecent(
    tenantId: string,
    search: MessageSearch,
    limit: number,
    beforeId: string | undefined,
  ): Promise<MessageSearchPage> {
    const filter = search.channel !== undefined ? 'channel' : search.status !== undefined ? 'status' : undefined;
    if (filter) {
      throw new SluiceError('INVALID_REQUEST', `${filter}: narrows a search by recipient; give \`to\` too`, { details: { field: filter } });
    }
    await this.requireTenant(tenantId);
    const found = await this.deps.messages
      .listRecent({ tenantId, ...(beforeId === undefined ? {} : { beforeId }), limit: limit + 1 })
      .catch(unavailableUnlessSluiceError);
    return pageOf(found, limit);
  }

  async getMessage(tenantId: string, messageId: string): Promise<AdminMessageView | undefined> {
    const { messages, webhooks, webhookEvents } = this.deps;
    const message = await messages.findById(tenantId, messageId).catch(unavailableUnlessSluiceError);
    if (!message) return undefined;
    const [attempts, hooks] = await Promise.all([messages.listAttempts(messageId), webhooks.list(tenantId)]).catch(
      unavailableUnlessSluiceError,
    );
    const events = await webhookEvents
      .listForMessage(
        tenantId,
        hooks.map((hook) => hook.id),
        messageId,
      )
      .catch(unavailableUnlessSluiceError);
    const fraud =
      message.costMicros !== null || message.fraudFlags.length > 0
        ? {
            ...(message.costMicros === null ? {} : { cost: message.costMicros / 1e6 }),
            flags: message.fraudFlags as FraudFlag[],
          }
        : undefined;
    const traceId = traceIdOf(message.traceparent);
    return {
      ...messageView(message, attempts),
      tenantId,
      events: events.map(eventView),
      ...(fraud ? { fraud } : {}),
      ...(traceId ? { traceId } : {}),
    };
  }

  async banStatus(tenantId: string, channel: Channel, to: string): Promise<BanStatusView> {
    const normalized = normalizeRecipient(channel, to, this.deps.defaultRegion);
    if (!normalized.ok) throw new SluiceError('INVALID_REQUEST', normalized.reason, { details: { field: 'to' } });
    await this.requireTenant(tenantId);
    const stored = (await this.deps.rules.get(tenantId, channel).catch(unavailableUnlessSluiceError))?.rules ?? [];
    const view = { channel, recipient: normalized.key };
    // Admission checks nothing without rules: no ban or count applies to a send.
    if (stored.length === 0) {
      const at = this.deps.clock.now();
      return { ...view, banned: false, bannedUntil: null, allowed: true, retryAfterMs: 0, rules: [], at: iso(at) };
    }
    const subject = frequencySubject(tenantId, channel, normalized.key);
    // On the store's clock (Redis TIME with Redis), as the sends are decided.
    const decision = await this.deps.limiter.peek({ subject, rules: stored.map(toLimiterRule) }).catch(unavailableUnlessSluiceError);
    const banned = decision.code === 'BANNED';
    return {
      ...view,
      banned,
      // A peek of a banned subject answers the time left on the ban.
      bannedUntil: banned ? iso(decision.at + decision.retryAfterMs) : null,
      allowed: decision.allowed,
      retryAfterMs: decision.retryAfterMs,
      rules: stored.map((rule, index) => ({ ...ruleView(rule), count: decision.counts[index] ?? 0 })),
      at: iso(decision.at),
    };
  }

  async previewRules(tenantId: string, channel: Channel, input: PreviewInput): Promise<RulesPreviewView> {
    let rules: RuleView[];
    if (input.rules === undefined) {
      await this.requireTenant(tenantId);
      rules = ((await this.deps.rules.get(tenantId, channel).catch(unavailableUnlessSluiceError))?.rules ?? []).map(ruleView);
    } else {
      rules = input.rules.map((rule) => ({ ...rule, banSeconds: rule.banSeconds ?? 0 }));
      checkRules(rules, 'rules');
      await this.requireTenant(tenantId);
    }
    const results = await replaySends(rules.map(toLimiterRule), input.sends, this.deps.clock.now());
    return { rules, results };
  }
}

const ruleView = (rule: RuleView): RuleView => ({
  windowSeconds: rule.windowSeconds,
  limit: rule.limit,
  banSeconds: rule.banSeconds ?? 0,
  ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
});

function summary(message: Message) {
  const { deliveryAttempts: _, ...rest } = messageView(message, []);
  return rest;
}

/** A page of `limit` from up to `limit + 1` messages newest first; the one past it says another page follows. */
function pageOf(newestFirst: Message[], limit: number): MessageSearchPage {
  const page = newestFirst.slice(0, limit);
  return {
    messages: page.map(summary),
    ...(newestFirst.length > limit ? { nextCursor: encodeCursor(page.at(-1)!.id) } : {}),
  };
}

/** A search cursor: the last message id of a page, opaque to callers. */
function encodeCursor(id: string): string {
  return Buffer.from(`m:${id}`).toString('base64url');
}

/** Ids are base32 (`newMessageId`); a forged cursor's text never reaches the query. */
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString();
  const id = text.startsWith('m:') ? text.slice(2) : '';
  if (!MESSAGE_ID.test(id)) {
    throw new SluiceError('INVALID_REQUEST', "cursor: not a cursor (use a page's `nextCursor`)", { details: { field: 'cursor' } });
  }
  return id;
}
