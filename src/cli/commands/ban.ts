/** `sluice ban show|lift`: a recipient's ban and counts on a channel (a peek), and lifting the ban. */
import type { Command } from 'commander';
import { SluiceError } from '../../core/errors.js';
import type { Backend } from '../../main/backend/backend.js';
import { channelArg } from '../arguments.js';
import type { CommandContext } from '../context.js';

/**
 * Without Redis the bans and counts live in the serving process, out of a command's reach: a
 * command would read (or lift) an empty limiter of its own. Refused, pointing at the admin API.
 */
function requireSharedLimiter(backend: Backend['kind'], path: string): void {
  if (backend === 'embedded') {
    throw new SluiceError(
      'INVALID_REQUEST',
      `without SLUICE_REDIS_URL bans and counts live in the serving process: use the admin API (${path}) of the running server`,
    );
  }
}

export function addBanCommands(program: Command, context: CommandContext): void {
  const ban = program.command('ban').description("A recipient's ban and counts on a channel (with Redis)");
  ban
    .command('show <tenantId> <channel> <to>')
    .description("Whether the recipient is banned, until when, and each rule's count (consumes and records nothing), as JSON")
    .action(async (tenantId: string, channel: string, to: string) => {
      return context.withService('lookups', async (lookups, backend) => {
        requireSharedLimiter(backend, 'GET /v1/admin/tenants/:id/bans/:channel/:to');
        console.log(JSON.stringify(await lookups.banStatus(tenantId, channelArg(channel), to), null, 2));
      });
    });
  ban
    .command('lift <tenantId> <channel> <to>')
    .description('Lift the ban: {lifted}; --reset-counts also forgets what its rules counted')
    .option('--reset-counts', "also forget the recipient's counts, so the next send is not refused and banned again")
    .action(async (tenantId: string, channel: string, to: string, options: { resetCounts?: boolean }) => {
      return context.withService('bans', async (bans, backend) => {
        requireSharedLimiter(backend, 'DELETE /v1/admin/tenants/:id/bans/:channel/:to');
        const lifted = await bans.liftBan(tenantId, channelArg(channel), to, { resetCounts: options.resetCounts ?? false });
        console.log(JSON.stringify({ lifted }, null, 2));
      });
    });
}
