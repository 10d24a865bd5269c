/** What the embedded default keeps of its limiter across a restart: part of {@link SETTINGS}. */
import { spec } from './spec.js';

export const LIMITER_SNAPSHOT_SETTINGS = {
  limiterSnapshotMs: spec({
    env: 'SLUICE_LIMITER_SNAPSHOT_MS',
    kind: 'int',
    default: 30_000,
    range: [0, 3_600_000],
    description:
      "Without Redis (the embedded default): how often the serving process saves its in-process limiter's bans, sliding-log counts and daily windows in the database (`limiter_snapshots`), besides at shutdown; a start restores them, so a ban survives a restart. A crash loses what changed since the last save (docs/storage.md). 0: never saved, and a restart forgets them. Ignored with SLUICE_REDIS_URL (Redis keeps them).",
  }),
  limiterSnapshotMaxEntries: spec({
    env: 'SLUICE_LIMITER_SNAPSHOT_MAX_ENTRIES',
    kind: 'int',
    default: 100_000,
    range: [1000, 100_000],
    description:
      'The bound of one such snapshot: a subject (recipient, quota bucket) and each of its log entries and windows count one; banned subjects are saved first, then the others, until the bound (about 10 MB at most). What does not fit is forgotten at a restart; the log line of each restore and of the save at shutdown gives the counts.',
  }),
};
