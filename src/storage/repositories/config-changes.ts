/** The shared change log (0022): which configuration keys changed, read by every instance on the database. */
import { randomUUID } from 'node:crypto';
import type { Database } from '../database.js';

export interface ConfigChange {
  id: string;
  key: string;
  origin: string;
  at: number;
}

export class ConfigChangesRepository {
  constructor(private readonly database: Database) {}

  /** Appends a change; drops the rows older than `keepMs` (the log stays a minute's worth, a few rows). */
  async append(key: string, origin: string, at: number, keepMs: number): Promise<void> {
    await this.database.db
      .insertInto('config_changes')
      .values({ id: randomUUID(), change_key: key.slice(0, 512), origin, created_at: at })
      .execute();
    await this.database.db
      .deleteFrom('config_changes')
      .where('created_at', '<', at - keepMs)
      .execute();
  }

  /** The changes made at or after `since`, oldest first (at most `limit`). */
  async since(since: number, limit: number): Promise<ConfigChange[]> {
    const rows = await this.database.db
      .selectFrom('config_changes')
      .selectAll()
      .where('created_at', '>=', since)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ id: row.id, key: row.change_key, origin: row.origin, at: Number(row.created_at) }));
  }
}
