/** `sluice serve`: the command; what serving does is `../serve.ts`. */
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { serve } from '../serve.js';

export function addServeCommand(program: Command, context: CommandContext): void {
  program
    .command('serve')
    .description('Run the HTTP API and/or the dispatchers (SLUICE_ROLES, default both)')
    .option('--roles <roles>', 'api, worker or api,worker (overrides SLUICE_ROLES)')
    .option('--demo', 'on a new database, create a demo tenant with the seed rules and print its key')
    .action(async (options: { roles?: string; demo?: boolean }) => {
      if (options.roles) process.env.SLUICE_ROLES = options.roles;
      const settings = context.settings();
      // The demo's webhooks post to a local endpoint: loopback is refused otherwise.
      await serve(options.demo ? { ...settings, webhookAllowPrivate: true } : settings, { demo: options.demo ?? false });
    });
}
