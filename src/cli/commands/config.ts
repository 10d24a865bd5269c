/** `sluice config check`: validate the settings and print them, secrets masked. */
import type { Command } from 'commander';
import { describeSettings, unknownVariables } from '../../settings/settings.js';
import type { CommandContext } from '../context.js';

export function addConfigCommands(program: Command, context: CommandContext): void {
  program
    .command('config')
    .description('Configuration')
    .command('check')
    .description('Validate the settings and print them, secrets masked')
    .action(() => {
      // Named first: a misspelled variable is often why another setting is missing or wrong.
      for (const name of unknownVariables()) console.error(`warning: ${name} is not a sluice setting (ignored); see docs/configuration.md`);
      for (const line of describeSettings(context.settings())) console.log(line);
      console.log('settings OK');
    });
}
