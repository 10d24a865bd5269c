/**
 * The embedded limiter's snapshots: a JSON body per name, replaced at each save (storage does not
 * read it).
 *
 * A body is written in parts of {@link PART_CHARS}, each a row of its own (`<name>#<generation>#<i>`)
 * in a statement of its own, then the name's row is switched to the new parts in one transaction,
 * then the old parts are deleted one by one. On SQLite each statement runs on the event loop:
 * a 4 MiB body in one statement held it for 300 to 700 ms on the loaded 2-core test machine, and
 * in parts no statement writes more than 128 KiB characters. A reader sees the old body or the
 * new one, whole; a save cut short leaves parts no row names, which the next save deletes.
 */
import type { Database } from '../database.js';

/** Characters per part. */
const PART_CHARS = 128 * 1024;

/** The body of a name's row once its parts are elsewhere. */
interface Manifest {
  parts: string;
  count: number;
}

export class LimiterSnapshotsRepository {
  constructor(private readonly database: Database) {}

  async load(name: string): Promise<{ takenAt: number; body: string } | undefined> {
    const row = await this.database.db.selectFrom('limiter_snapshots').selectAll().where('name', '=', name).executeTakeFirst();
    if (!row) return undefined;
    const manifest = manifestOf(row.body);
    if (!manifest) return { takenAt: Number(row.taken_at), body: row.body };
    const names = partNames(name, manifest);
    if (names.length === 0) return { takenAt: Number(row.taken_at), body: '' };
    const parts = await this.database.db.selectFrom('limiter_snapshots').select(['name', 'body']).where('name', 'in', names).execute();
    const byName = new Map(parts.map((part) => [part.name, part.body]));
    return { takenAt: Number(row.taken_at), body: names.map((part) => byName.get(part) ?? '').join('') };
  }

  /** Replaces the snapshot of `name`: a reader sees the old one or the new one, whole. */
  async save(name: string, takenAt: number, body: string): Promise<void> {
    const db = this.database.db;
    const previous = await db.selectFrom('limiter_snapshots').select('body').where('name', '=', name).executeTakeFirst();
    const old = previous ? manifestOf(previous.body) : undefined;
    const manifest: Manifest = { parts: `${takenAt}-${Math.random().toString(36).slice(2, 8)}`, count: 0 };
    const names: string[] = [];
    for (let start = 0; start < body.length; ) {
      let end = Math.min(body.length, start + PART_CHARS);
      // A surrogate pair stays in one part: half of one would not survive its encoding.
      if (end < body.length && isHighSurrogate(body.charCodeAt(end - 1))) end--;
      const part = `${name}#${manifest.parts}#${names.length}`;
      await db
        .insertInto('limiter_snapshots')
        .values({ name: part, taken_at: takenAt, body: body.slice(start, end) })
        .execute();
      names.push(part);
      start = end;
    }
    manifest.count = names.length;
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('limiter_snapshots').where('name', '=', name).execute();
      await trx
        .insertInto('limiter_snapshots')
        .values({ name, taken_at: takenAt, body: JSON.stringify(manifest) })
        .execute();
    });
    // The old parts, then any a save cut short left behind.
    for (const part of old ? partNames(name, old) : []) await db.deleteFrom('limiter_snapshots').where('name', '=', part).execute();
    const strays = await db
      .selectFrom('limiter_snapshots')
      .select('name')
      .where('name', 'like', `${name}#%`)
      .where('name', 'not like', `${name}#${manifest.parts}#%`)
      .execute();
    for (const stray of strays) await db.deleteFrom('limiter_snapshots').where('name', '=', stray.name).execute();
  }
}

function partNames(name: string, manifest: Manifest): string[] {
  return Array.from({ length: manifest.count }, (_, index) => `${name}#${manifest.parts}#${index}`);
}

/** The manifest a name's row holds when its body is in parts; undefined for a body kept whole (a snapshot is an object with `version`). */
function manifestOf(body: string): Manifest | undefined {
  if (!body.startsWith('{"parts":')) return undefined;
  const value = JSON.parse(body) as Partial<Manifest>;
  return typeof value.parts === 'string' && typeof value.count === 'number' ? { parts: value.parts, count: value.count } : undefined;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
