/** `sluice webhook`: subscribe a tenant's endpoints to its message events, change, list, remove them, replay an event. */
import type { Command } from 'commander';
import { NewWebhookBody, WebhookPatchBody } from '../../api/webhooks.js';
import { SluiceError } from '../../core/errors.js';
import type { NewWebhookInput, WebhookPatch } from '../../services/contracts.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

const EVENTS_HELP =
  'comma-separated: message.accepted, message.sent, message.failed, message.canceled, message.delivered, message.undelivered (default: all but message.accepted)';
const eventsArg = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');

interface UpdateOptions {
  url?: string;
  events?: string[];
  description?: string;
  enable?: boolean;
  disable?: boolean;
  rotateSecret?: boolean;
}

export function addWebhookCommands(program: Command, context: CommandContext): void {
  const webhook = program.command('webhook').description("Tenants' status callbacks: signed POSTs of their message events");
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  webhook
    .command('add <tenantId> <url>')
    .description('Subscribe an endpoint; prints its signing secret, shown this once')
    .option('--events <list>', EVENTS_HELP, eventsArg)
    .option('--description <text>')
    .action((tenantId: string, url: string, options: { events?: string[]; description?: string }) =>
      context.withService('webhooks', async (webhooks) => {
        const body = await checkBody(NewWebhookBody, {
          url,
          ...(options.events ? { events: options.events } : {}),
          ...(options.description === undefined ? {} : { description: options.description }),
        });
        const created = await webhooks.create(tenantId, body as NewWebhookInput);
        if (!created) throw new SluiceError('NOT_FOUND', `no tenant ${tenantId}`);
        print(created);
      }),
    );
  webhook.command('list <tenantId>').action((tenantId: string) =>
    context.withService('webhooks', async (webhooks) => {
      const list = await webhooks.list(tenantId);
      if (!list) throw new SluiceError('NOT_FOUND', `no tenant ${tenantId}`);
      print(list);
    }),
  );
  webhook
    .command('update <tenantId> <webhookId>')
    .description(
      'Change an endpoint: only what is given changes; --rotate-secret prints a new secret (the old one signs too for the grace period)',
    )
    .option('--url <url>')
    .option('--events <list>', EVENTS_HELP, eventsArg)
    .option('--description <text>')
    .option('--enable')
    .option('--disable', 'stop writing events for it')
    .option('--rotate-secret')
    .action((tenantId: string, webhookId: string, options: UpdateOptions) =>
      context.withService('webhooks', async (webhooks) => {
        if (options.enable && options.disable) throw new SluiceError('INVALID_REQUEST', 'give --enable or --disable, not both');
        const patch = {
          ...(options.url === undefined ? {} : { url: options.url }),
          ...(options.events === undefined ? {} : { events: options.events }),
          ...(options.description === undefined ? {} : { description: options.description }),
          ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
        };
        if (Object.keys(patch).length === 0 && !options.rotateSecret)
          throw new SluiceError('INVALID_REQUEST', 'nothing to change: give at least one option (--help lists them)');
        let result: unknown;
        if (Object.keys(patch).length > 0) {
          const body = await checkBody(WebhookPatchBody, patch);
          result = await webhooks.update(tenantId, webhookId, body as WebhookPatch);
          if (!result) throw new SluiceError('NOT_FOUND', `no webhook ${webhookId} of tenant ${tenantId}`);
        }
        if (options.rotateSecret) {
          result = await webhooks.rotateSecret(tenantId, webhookId);
          if (!result) throw new SluiceError('NOT_FOUND', `no webhook ${webhookId} of tenant ${tenantId}`);
        }
        print(result);
      }),
    );
  webhook.command('remove <tenantId> <webhookId>').action((tenantId: string, webhookId: string) =>
    context.withService('webhooks', async (webhooks) => {
      if (!(await webhooks.remove(tenantId, webhookId)))
        throw new SluiceError('NOT_FOUND', `no webhook ${webhookId} of tenant ${tenantId}`);
      console.log(`removed ${webhookId}`);
    }),
  );
  webhook
    .command('replay <tenantId> <webhookId> [eventId]')
    .description('Post an event again (retried for another 24 h); without an event id, lists the failed events')
    .action((tenantId: string, webhookId: string, eventId: string | undefined) =>
      context.withService('webhooks', async (webhooks) => {
        if (eventId === undefined) {
          const failed = await webhooks.listEvents(tenantId, webhookId, { status: 'failed' });
          if (!failed) throw new SluiceError('NOT_FOUND', `no webhook ${webhookId} of tenant ${tenantId}`);
          print(failed.map(({ body: _body, ...event }) => event));
          return;
        }
        const replayed = await webhooks.replay(tenantId, webhookId, eventId);
        if (!replayed) throw new SluiceError('NOT_FOUND', `no event ${eventId} of webhook ${webhookId}`);
        print({ id: replayed.id, status: replayed.status, nextAt: replayed.nextAt });
      }),
    );
}
