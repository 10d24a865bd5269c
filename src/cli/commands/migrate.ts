/** `sluice migrate`: apply pending database migrations. */
import type { Command } from 'commander';
import { openDatabase } from '../../storage/database.js';
import { migrateToLatest } from '../../storage/migrations/index.js';
import type { CommandContext } from '../context.js';

export function addMigrateCommand(program: Command, context: CommandContext): void {
  program
    .command('migrate')
    .description('Apply pending database migrations')
    .action(async () => {
      const settings = context.settings();
      const database = await openDatabase(settings.dbUrl);
      try {
        const applied = await migrateToLatest(database, { defaultRegion: settings.defaultRegion });
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      } finally {
        await database.close();
      }
    });
}
