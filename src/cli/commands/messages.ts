/**
 * `sluice messages find`: a tenant's messages to one recipient, newest first (the admin search, on
 * the database). `sluice messages list`: the key's own tenant's messages, through the running service
 * (GET /v1/messages), as a client sees them.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { MESSAGE_STATUSES, type MessageStatus } from '../../core/lifecycle.js';
import { channelArg, integerArg, oneOf } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { callService, serviceBase } from '../service-call.js';

const statusArg = (value: string): MessageStatus => {
  if (!(MESSAGE_STATUSES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`"${value}" is not a status: use one of ${MESSAGE_STATUSES.join(', ')}`);
  }
  return value as MessageStatus;
};

export function addMessagesCommands(program: Command, context: CommandContext): void {
  const messages = program.command('messages').description("Look up a tenant's messages");
  messages
    .command('find <tenantId> <to>')
    .description(
      'Messages to a recipient (any spelling a send accepts), newest first, as JSON {messages, nextCursor?}; ' +
        'pass --cursor NEXTCURSOR for the next page',
    )
    .option('--channel <channel>', 'only this channel (default: every channel that reads the recipient)', channelArg)
    .option('--status <status>', `only this status: ${oneOf(MESSAGE_STATUSES)}`, statusArg)
    .option('--limit <n>', 'messages per page, 1 to 200 (default 50)', integerArg)
    .option('--cursor <cursor>', "a previous page's nextCursor")
    .action(
      (
        tenantId: string,
        to: string,
        options: { channel?: ReturnType<typeof channelArg>; status?: MessageStatus; limit?: number; cursor?: string },
      ) =>
        context.withService('lookups', async (lookups) => {
          const page = await lookups.searchMessages(tenantId, { to, ...options });
          console.log(JSON.stringify(page, null, 2));
        }),
    );
  messages
    .command('list')
    .description(
      "The key's tenant's messages through the running service (GET /v1/messages), newest first, as JSON " +
        '{messages, nextCursor?}; --to narrows to one recipient; pass --cursor NEXTCURSOR for the next page',
    )
    .requiredOption('--key <apiKey>', 'tenant API key (or SLUICE_API_KEY)', process.env.SLUICE_API_KEY)
    .option('--url <url>', 'base URL of the service (default: http://SLUICE_HOST:SLUICE_PORT)')
    .option('--to <recipient>', 'only messages to this recipient (any spelling a send accepts)')
    .option('--channel <channel>', 'only this channel (with --to)', channelArg)
    .option('--status <status>', `only this status (with --to): ${oneOf(MESSAGE_STATUSES)}`, statusArg)
    .option('--limit <n>', 'messages per page, 1 to 200 (default 50)', integerArg)
    .option('--cursor <cursor>', "a previous page's nextCursor")
    .action(
      async (options: { key: string; url?: string; to?: string; channel?: string; status?: string; limit?: number; cursor?: string }) => {
        const query = new URLSearchParams();
        for (const name of ['to', 'channel', 'status', 'limit', 'cursor'] as const) {
          const value = options[name];
          if (value !== undefined) query.set(name, String(value));
        }
        const path = query.size > 0 ? `/v1/messages?${query}` : '/v1/messages';
        const page = await callService<unknown>(serviceBase(context, options.url), { method: 'GET', path, key: options.key });
        console.log(JSON.stringify(page, null, 2));
      },
    );
}
