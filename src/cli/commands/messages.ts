/** `sluice messages find`: a tenant's messages to one recipient, newest first (the admin search). */
import { type Command, InvalidArgumentError } from 'commander';
import { MESSAGE_STATUSES, type MessageStatus } from '../../core/lifecycle.js';
import { channelArg, integerArg, oneOf } from '../arguments.js';
import type { CommandContext } from '../context.js';

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
}
