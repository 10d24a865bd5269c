/** `sluice serve`: the command; what serving does is `../serve.ts`. */
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { serve } from '../serve.js';

export function addServeCommand(program: Command, context: CommandContext): void {
  program
    .command('serve')
    .description('Run the HTTP API and/or the dispatchers (SLUICE_ROLES, default both)')
    .option('--roles <roles>', 'api, worker or api,worker (overrides SLUICE_ROLES)')
    .option(
      '--demo',
      'on a new database, create a demo tenant with the seed rules and print its key (and, unless SLUICE_WEBHOOK_ALLOW_PRIVATE is set, allow private webhook targets)',
    )
    .action(async (options: { roles?: string; demo?: boolean }) => {
      if (options.roles) process.env.SLUICE_ROLES = options.roles;
      // The demo may allow private webhook targets for its local endpoint (`../demo.ts`), never
      // against a setting given.
      await serve(context.settings(), { demo: options.demo ?? false, allowPrivateGiven: context.given('SLUICE_WEBHOOK_ALLOW_PRIVATE') });
    });
}
