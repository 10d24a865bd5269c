/**
 * 0004: blacklist entries are stored under recipients' canonical keys (`normalizeRecipient`'s
 * `key`), as sends are now looked up: entries written before in another spelling
 * (`Bob+x@example.com`, `OPS-ALERTS`, `https://h/x#1`) would no longer match a send.
 *
 * Each row becomes the row of its key; an entry on `*` becomes one row per channel that reads its
 * text (`138.0013.8002`: the phone number, read in `defaultRegion`, and the bot name). Rows that
 * now share a key merge into the oldest (its reason and time). A row no channel reads is kept as
 * it is. Irreversible: a key does not say which spelling it came from, so `down` changes nothing.
 */
import type { Kysely, Migration } from 'kysely';
import { type Channel, isChannel } from '../../core/channels.js';
import { normalizeRecipient, readOnEveryChannel } from '../../core/recipients.js';

interface Row {
  scope: string;
  channel: string;
  recipient: string;
  reason: string | null;
  created_at: number | string | bigint;
}

function keysOf(channel: string, recipient: string, defaultRegion: string | undefined): string[] {
  if (isChannel(channel)) {
    const result = normalizeRecipient(channel as Channel, recipient, defaultRegion);
    return [result.ok ? result.key : recipient];
  }
  const keys = readOnEveryChannel(recipient, defaultRegion).map((reading) => reading.key);
  return keys.length > 0 ? [...new Set(keys)] : [recipient];
}

export const blacklistCanonicalKeysMigration = (options: { defaultRegion?: string | undefined }): Migration => ({
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
  async up(db: Kysely<any>) {
    const rows = (await db
      .selectFrom('blacklist')
      .select(['scope', 'channel', 'recipient', 'reason', 'created_at'])
      .orderBy('created_at')
      .orderBy('recipient')
      .execute()) as Row[];
    const id = (row: { scope: string; channel: string; recipient: string }) => JSON.stringify([row.scope, row.channel, row.recipient]);
    const wanted = new Map<string, Row>();
    for (const row of rows) {
      for (const key of keysOf(row.channel, row.recipient, options.defaultRegion)) {
        const keyed = { ...row, recipient: key };
        if (!wanted.has(id(keyed))) wanted.set(id(keyed), keyed);
      }
    }
    // Deletes first, then inserts: the primary key (scope, channel, recipient) is never violated.
    for (const row of rows) {
      if (wanted.has(id(row))) continue;
      await db
        .deleteFrom('blacklist')
        .where('scope', '=', row.scope)
        .where('channel', '=', row.channel)
        .where('recipient', '=', row.recipient)
        .execute();
    }
    const existing = new Map(rows.map((row) => [id(row), row]));
    for (const [key, row] of wanted) {
      const stored = existing.get(key);
      if (!stored) await db.insertInto('blacklist').values(row).execute();
      else if (!(stored.reason === row.reason && String(stored.created_at) === String(row.created_at))) {
        // Already stored under its key, but an older spelling of it was blacklisted first.
        await db
          .updateTable('blacklist')
          .set({ reason: row.reason, created_at: row.created_at })
          .where('scope', '=', row.scope)
          .where('channel', '=', row.channel)
          .where('recipient', '=', row.recipient)
          .execute();
      }
    }
  },

  async down() {
    // Irreversible (see above): the keyed rows still block what they blocked.
  },
});
