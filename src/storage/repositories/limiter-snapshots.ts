/** The embedded limiter's snapshots: a JSON body per name, replaced at each save (storage does not read it). */
import type { Database } from '../database.js';

export class LimiterSnapshotsRepository {
  constructor(private readonly database: Database) {}

  async load(name: string): Promise<{ takenAt: number; body: string } | undefined> {
    const row = await this.database.db.selectFrom('limiter_snapshots').selectAll().where('name', '=', name).executeTakeFirst();
    return row && { takenAt: Number(row.taken_at), body: row.body };
  }

  /** Replaces the snapshot of `name` (one transaction: a reader sees the old one or the new one). */
  async save(name: string, takenAt: number, body: string): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('limiter_snapshots').where('name', '=', name).execute();
      await trx.insertInto('limiter_snapshots').values({ name, taken_at: takenAt, body }).execute();
    });
  }
}
