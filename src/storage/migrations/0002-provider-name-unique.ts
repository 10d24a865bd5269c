/**
 * 0002: a provider's name is unique in its scope and channel (`UNIQUE(scope, channel, name)`), as
 * the admin API and the CLI have checked since names label the send metrics and errors. The
 * check alone let two concurrent creates of one name both pass.
 *
 * Rows that already share a name (made before the check, or by such a race) keep the oldest's
 * name; each later one is renamed `<name> (<id>)`, so the index can be built and every provider
 * stays, told apart. The migration logs nothing: `sluice provider list` shows the new names.
 */
import type { Kysely, Migration } from 'kysely';
import { DIALECT_CAPABILITIES, type Dialect } from '../database.js';

export const providerNameUniqueMigration = (dialect: Dialect): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const rows = (await db.selectFrom('providers').select(['id', 'scope', 'channel', 'name']).orderBy('id').execute()) as {
      id: string;
      scope: string;
      channel: string;
      name: string;
    }[];
    const seen = new Set<string>();
    for (const row of rows) {
      const key = JSON.stringify([row.scope, row.channel, row.name]);
      if (!seen.has(key)) {
        seen.add(key);
        continue;
      }
      await db
        .updateTable('providers')
        // Within the API's 100 characters, so the new name can be sent back in a PATCH.
        .set({ name: `${row.name.slice(0, 100 - row.id.length - 3)} (${row.id})` })
        .where('id', '=', row.id)
        .execute();
    }
    await db.schema
      .createIndex('providers_scope_channel_name_unique')
      .on('providers')
      .columns(['scope', 'channel', 'name'])
      .unique()
      .execute();
  },

  // biome-ignore lint/suspicious/noExplicitAny: see up().
  async down(db: Kysely<any>) {
    const drop = db.schema.dropIndex('providers_scope_channel_name_unique');
    await (DIALECT_CAPABILITIES[dialect].indexNamedByTable ? drop.on('providers') : drop).execute();
  },
});
