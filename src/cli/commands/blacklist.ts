/** `sluice blacklist`: add, remove and list blacklisted recipients of a tenant, or of every tenant (`--global`). */
import type { Command } from 'commander';
import { BlacklistBody, BlacklistQuery, BlacklistRemoveBody } from '../../api/blacklists.js';
import { CHANNELS, type Channel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import type { BlacklistScope } from '../../services/contracts.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

const CHANNEL_OR_ALL = `${CHANNELS.join(', ')} or * (every channel, the default)`;

/**
 * Whose list a blacklist command works on: `--global`, or the tenant named by the first argument
 * (the rest are recipients). Refused when it is both or neither.
 */
function blacklistTarget(
  args: string[],
  options: { global?: boolean },
  needsRecipients: boolean,
): { scope: BlacklistScope; recipients: string[] } {
  const [first, ...rest] = args;
  if (options.global) return { scope: 'global', recipients: args };
  if (first === undefined) throw new SluiceError('INVALID_REQUEST', 'name a TENANT, or pass --global for the list of every tenant');
  if (!needsRecipients && rest.length > 0) throw new SluiceError('INVALID_REQUEST', `one TENANT only, not also ${rest.join(' ')}`);
  return { scope: { tenant: first }, recipients: rest };
}

export function addBlacklistCommands(program: Command, context: CommandContext): void {
  const blacklist = program
    .command('blacklist')
    .description("Add, remove and list blacklisted recipients: a tenant's (TENANT) or every tenant's (--global)");
  blacklist
    .command('add <args...>')
    .usage('(TENANT | --global) [--channel C] [--reason TEXT] RECIPIENT...')
    .description('Blacklist recipients; each is normalised as sends are (a national phone number gets the default region)')
    .option('--global', "every tenant's list")
    .option('--channel <channel>', CHANNEL_OR_ALL)
    .option('--reason <text>')
    .action((args: string[], options: { global?: boolean; channel?: string; reason?: string }) =>
      context.withService('blacklists', async (blacklists) => {
        const { scope, recipients } = blacklistTarget(args, options, true);
        const body = await checkBody(BlacklistBody, {
          channel: options.channel ?? '*',
          recipients,
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        });
        const added = await blacklists.addToBlacklist(scope, body.channel as Channel | '*', body.recipients, body.reason);
        console.log(JSON.stringify(added, null, 2));
      }),
    );
  blacklist
    .command('remove <args...>')
    .usage('(TENANT | --global) [--channel C] RECIPIENT...')
    .description('Remove recipients from the blacklist (the channel must be the one they were added with)')
    .option('--global', "every tenant's list")
    .option('--channel <channel>', CHANNEL_OR_ALL)
    .action((args: string[], options: { global?: boolean; channel?: string }) =>
      context.withService('blacklists', async (blacklists) => {
        const { scope, recipients } = blacklistTarget(args, options, true);
        const body = await checkBody(BlacklistRemoveBody, { channel: options.channel ?? '*', recipients });
        console.log(JSON.stringify(await blacklists.removeFromBlacklist(scope, body.channel as Channel | '*', body.recipients), null, 2));
      }),
    );
  blacklist
    .command('list [tenant]')
    .usage('(TENANT | --global) [--channel C] [--limit N] [--after CURSOR]')
    .description("A page of entries by channel then recipient; pass the answer's `next` as --after for the next page")
    .option('--global', "every tenant's list")
    .option('--channel <channel>', `only entries of this channel value: ${CHANNELS.join(', ')} or *`)
    .option('--limit <n>', 'entries per page, 1 to 1000 (default 100)')
    .option('--after <cursor>')
    .action((tenantId: string | undefined, options: { global?: boolean; channel?: string; limit?: string; after?: string }) =>
      context.withService('blacklists', async (blacklists) => {
        if (options.global && tenantId !== undefined) {
          throw new SluiceError('INVALID_REQUEST', `either TENANT (${tenantId}) or --global, not both`);
        }
        const { scope } = blacklistTarget(tenantId === undefined ? [] : [tenantId], options, false);
        const { global: _, ...query } = options;
        const { channel, limit, after } = await checkBody(BlacklistQuery, query);
        const page = await blacklists.listBlacklist(scope, {
          ...(channel === undefined ? {} : { channel: channel as Channel | '*' }),
          ...(limit === undefined ? {} : { limit: Number(limit) }),
          ...(after === undefined ? {} : { after }),
        });
        console.log(JSON.stringify(page, null, 2));
      }),
    );
}
