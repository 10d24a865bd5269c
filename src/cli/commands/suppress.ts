/** `sluice suppress …` and `sluice consent …`: any tenant's suppressions and consent record, as the admin API does them. */
import type { Command } from 'commander';
import { ConsentQuery, SuppressBody, SuppressionQuery } from '../../api/suppressions.js';
import { CHANNELS, type Channel, isChannel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import type { ConsentSourceName } from '../../services/views.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

function channelOf(channel: string): Channel {
  if (!isChannel(channel)) throw new SluiceError('INVALID_REQUEST', `channel: one of ${CHANNELS.join(', ')}`);
  return channel;
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export function addSuppressionCommands(program: Command, context: CommandContext): void {
  const suppress = program.command('suppress').description("A tenant's suppressions: add, remove, show and list (source `admin`)");
  suppress
    .command('add <tenant> <channel> <recipient>')
    .description('Suppress a recipient for a category (default *: every one)')
    .option('--category <category>')
    .option('--reason <text>', 'default manual')
    .action((tenant: string, channel: string, recipient: string, options: { category?: string; reason?: string }) =>
      context.withService('suppressions', async (service) => {
        const body = await checkBody(SuppressBody, options);
        print(await service.suppress(tenant, channelOf(channel), recipient, { ...body, source: 'admin' }));
      }),
    );
  suppress
    .command('remove <tenant> <channel> <recipient>')
    .description("Lift a recipient's suppression of a category (default *)")
    .option('--category <category>')
    .action((tenant: string, channel: string, recipient: string, options: { category?: string }) =>
      context.withService('suppressions', async (service) => {
        const body = await checkBody(SuppressBody, options);
        print(await service.unsuppress(tenant, channelOf(channel), recipient, { ...body, source: 'admin' }));
      }),
    );
  suppress
    .command('show <tenant> <channel> <recipient>')
    .description("A recipient's suppressions on a channel")
    .action((tenant: string, channel: string, recipient: string) =>
      context.withService('suppressions', async (service) => print(await service.get(tenant, channelOf(channel), recipient))),
    );
  suppress
    .command('list <tenant>')
    .description("A page of a tenant's suppressions; pass the answer's `next` as --after")
    .option('--channel <channel>')
    .option('--category <category>')
    .option('--source <source>')
    .option('--limit <n>')
    .option('--after <cursor>')
    .action((tenant: string, options: Record<string, string | undefined>) =>
      context.withService('suppressions', async (service) => {
        const query = await checkBody(SuppressionQuery, options);
        print(
          await service.list(tenant, {
            ...(query.channel === undefined ? {} : { channel: channelOf(query.channel) }),
            ...(query.category === undefined ? {} : { category: query.category }),
            ...(query.source === undefined ? {} : { source: query.source as ConsentSourceName }),
            ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
            ...(query.after === undefined ? {} : { after: query.after }),
          }),
        );
      }),
    );
  program
    .command('consent <tenant> <channel> <recipient>')
    .description("A recipient's consent record in a tenant, oldest first")
    .option('--limit <n>')
    .option('--after <cursor>')
    .action((tenant: string, channel: string, recipient: string, options: Record<string, string | undefined>) =>
      context.withService('suppressions', async (service) => {
        const query = await checkBody(ConsentQuery, options);
        print(
          await service.consent(tenant, channelOf(channel), recipient, {
            ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
            ...(query.after === undefined ? {} : { after: query.after }),
          }),
        );
      }),
    );
}
