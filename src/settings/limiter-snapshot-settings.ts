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
      "The bound of one such snapshot in entries: a subject (recipient, quota bucket) and each of its log entries and windows count one. Banned subjects are saved first, then the others, the most recently checked first; within each, tenants take turns by bytes, so one tenant cannot push out another's bans. What does not fit is forgotten at a restart; the log line of each restore and of the save at shutdown gives the counts.",
  }),
  limiterSnapshotMaxBytes: spec({
    env: 'SLUICE_LIMITER_SNAPSHOT_MAX_BYTES',
    kind: 'int',
    default: 4_194_304,
    range: [65_536, 15_728_640],
    description:
      "The bound of one such snapshot in bytes (its JSON, recipients' keys and request ids as written), beside SLUICE_LIMITER_SNAPSHOT_MAX_ENTRIES: whichever is reached first ends it, chosen in the same order (bans first, tenants by turns). The save is written a slice of 2 ms at a time, between requests.",
  }),
};
