/**
 * The admin lookups the console reads (behind SLUICE_ADMIN_TOKEN like the rest of the admin API):
 * a tenant's recent messages or those to one recipient, one message's timeline, a recipient's ban and counts, and
 * the rules dry run. Each reads only; the tenant of the path scopes every query (another tenant's
 * message answers 404).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BanParams } from '../../api/bans.js';
import { ChannelParam, IdParam } from '../../api/common.js';
import {
  AdminMessageView,
  BanStatusView,
  MessageParams,
  MessageSearchPage,
  MessageSearchQuery,
  RulesPreviewBody,
  RulesPreviewView,
} from '../../api/lookups.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const adminLookupRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const lookups = deps.lookups;

    app.get(
      '/v1/admin/tenants/:id/messages',
      {
        schema: adminSchema(
          "A tenant's messages, or those to one recipient, newest first, a page at a time",
          { params: IdParam, querystring: MessageSearchQuery },
          { 200: MessageSearchPage },
        ),
      },
      async (request) => {
        const { to, channel, status, limit, cursor } = request.query;
        return lookups.searchMessages(request.params.id, {
          ...(to === undefined ? {} : { to }),
          ...(channel === undefined ? {} : { channel }),
          ...(status === undefined ? {} : { status }),
          ...(limit === undefined ? {} : { limit: Number(limit) }),
          ...(cursor === undefined ? {} : { cursor }),
        });
      },
    );
    app.get(
      '/v1/admin/tenants/:id/messages/:messageId',
      {
        schema: adminSchema(
          "A tenant's message with its timeline: delivery attempts, receipt and status callbacks (404: not this tenant's)",
          { params: MessageParams },
          { 200: AdminMessageView },
        ),
      },
      async (request) => {
        const found = await lookups.getMessage(request.params.id, request.params.messageId);
        if (!found) throw new SluiceError('NOT_FOUND', 'no such message for this tenant');
        return found;
      },
    );
    app.get(
      '/v1/admin/tenants/:id/bans/:channel/:to',
      {
        schema: adminSchema(
          "Whether a recipient is banned now, until when, and each rule's count against its limit (a peek: consumes and records nothing)",
          { params: BanParams },
          { 200: BanStatusView },
        ),
      },
      async (request) => lookups.banStatus(request.params.id, request.params.channel, request.params.to),
    );
    app.post(
      '/v1/admin/tenants/:id/rules/:channel/preview',
      {
        schema: adminSchema(
          "Dry run: replay sends to one recipient against the given (or the channel's stored) rules in a limiter of its own; reads no live counts, records nothing",
          { params: ChannelParam, body: RulesPreviewBody },
          { 200: RulesPreviewView },
        ),
      },
      async (request) => {
        const { rules, sends } = request.body;
        return lookups.previewRules(request.params.id, request.params.channel, { ...(rules === undefined ? {} : { rules }), sends });
      },
    );
  };
