import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChannelParam, IdParam } from '../../api/common.js';
import {
  QuietHoursBody,
  QuietHoursRemoved,
  QuietHoursView,
  Retired,
  TemplateBody,
  TemplateList,
  TemplateListQuery,
  TemplateParams,
  TemplateVersions,
  TemplateVersionView,
} from '../../api/templates.js';
import { SluiceError } from '../../core/errors.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

/** Templates and quiet hours of a tenant channel, under /v1/admin behind SLUICE_ADMIN_TOKEN. */
export const templateRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => requireAdmin(deps, request));
    app.setErrorHandler(dependencyErrorHandler);
    const service = deps.templates;
    const base = '/v1/admin/tenants/:id/templates';

    app.put(
      `${base}/:channel/:name`,
      {
        schema: adminSchema(
          'Store a new version of a template (each PUT is the next version; sends use the newest, and pin it)',
          { params: TemplateParams, body: TemplateBody },
          { 200: TemplateVersionView },
        ),
      },
      async (request) => service.putTemplate(request.params.id, request.params.channel, request.params.name, request.body),
    );
    app.get(
      `${base}/:channel/:name`,
      {
        schema: adminSchema(
          "A template's versions, newest first (retired ones too)",
          { params: TemplateParams },
          { 200: TemplateVersions },
        ),
      },
      async (request) => ({ versions: await service.templateVersions(request.params.id, request.params.channel, request.params.name) }),
    );
    app.delete(
      `${base}/:channel/:name`,
      {
        schema: adminSchema(
          'Retire a template: sends naming it are refused (SMS: passed through to the vendor); a later PUT makes it live again',
          { params: TemplateParams },
          { 200: Retired },
        ),
      },
      async (request) => {
        const { id, channel, name } = request.params;
        if (!(await service.retireTemplate(id, channel, name)))
          throw new SluiceError('NOT_FOUND', `no live ${channel} template named "${name}"`);
        return { channel, name, retired: true as const };
      },
    );
    app.get(
      base,
      {
        schema: adminSchema(
          "The current version of a tenant's live templates",
          { params: IdParam, querystring: TemplateListQuery },
          { 200: TemplateList },
        ),
      },
      async (request) => ({ templates: await service.listTemplates(request.params.id, request.query.channel) }),
    );

    const quiet = '/v1/admin/tenants/:id/quiet-hours/:channel';
    app.put(
      quiet,
      {
        schema: adminSchema(
          "Set a tenant channel's quiet hours: messages that would be sent inside a window are scheduled for its end",
          { params: ChannelParam, body: QuietHoursBody },
          { 200: QuietHoursView },
        ),
      },
      async (request) => service.setQuietHours(request.params.id, request.params.channel, request.body),
    );
    app.get(
      quiet,
      { schema: adminSchema("A tenant channel's quiet hours", { params: ChannelParam }, { 200: QuietHoursView }) },
      async (request) => {
        const found = await service.getQuietHours(request.params.id, request.params.channel);
        if (!found) throw new SluiceError('NOT_FOUND', 'no quiet hours on this channel');
        return found;
      },
    );
    app.delete(
      quiet,
      { schema: adminSchema("Remove a tenant channel's quiet hours", { params: ChannelParam }, { 200: QuietHoursRemoved }) },
      async (request) => {
        if (!(await service.removeQuietHours(request.params.id, request.params.channel)))
          throw new SluiceError('NOT_FOUND', 'no quiet hours on this channel');
        return { channel: request.params.channel, removed: true as const };
      },
    );
  };
