/**
 * The embedded default's limiter across a restart: the serving process restores the snapshot its
 * database holds when it starts, saves one every SLUICE_LIMITER_SNAPSHOT_MS and at shutdown (after
 * the last decision). A crash loses what changed since the last save. Only `serve` keeps them: a
 * CLI command's runtime decides nothing, and its save would replace the server's.
 */
import type { MemorySnapshot } from '../limiter/index.js';
import { LimiterSnapshotsRepository } from '../storage/index.js';
import type { Runtime } from './runtime.js';

/** The row the embedded limiter's snapshot is kept in. */
const SNAPSHOT_NAME = 'embedded-limiter';

export interface LimiterSnapshots {
  /**
   * Stops the periodic save, then saves once more (call when no decision can follow); `save:
   * false` (a start that failed) only stops: its state is the restored one, and another process
   * on the port may be the one deciding.
   */
  close(options?: { save: boolean }): Promise<void>;
}

/** Restores the snapshot and starts saving; undefined when the limiter is Redis's or snapshots are off. */
export async function keepLimiterSnapshots(runtime: Runtime): Promise<LimiterSnapshots | undefined> {
  const { settings, logger, clock } = runtime;
  if (runtime.backend.kind !== 'embedded' || settings.limiterSnapshotMs === 0) return undefined;
  const store = runtime.backend.memoryStore;
  const snapshots = new LimiterSnapshotsRepository(runtime.database);

  const stored = await snapshots.load(SNAPSHOT_NAME);
  if (stored) {
    try {
      const restored = store.restore(JSON.parse(stored.body) as MemorySnapshot);
      logger.info({ subjects: restored, savedAgoMs: clock.now() - stored.takenAt }, 'limiter state restored (bans and counts)');
    } catch (error) {
      logger.warn({ err: error }, 'the saved limiter state is unreadable: starting without it');
    }
  }

  let saving: Promise<void> | undefined;
  // Bounded in entries and bytes (SLUICE_LIMITER_SNAPSHOT_MAX_BYTES, within MySQL's MEDIUMTEXT) and
  // written between requests; what the bounds leave out is said once, until a save keeps everything.
  let saidLeftOut = false;
  const save = async () => {
    const written = await store.snapshotJson({
      maxEntries: settings.limiterSnapshotMaxEntries,
      maxBytes: settings.limiterSnapshotMaxBytes,
    });
    await snapshots.save(SNAPSHOT_NAME, written.takenAt, written.body);
    const saved = { subjects: written.subjects, bans: written.bans, leftOut: written.leftOut, bytes: written.bytes };
    if (written.leftOut > 0 && !saidLeftOut)
      logger.warn(
        saved,
        'limiter state over its snapshot bounds: bans first, then the most recent, each tenant its share (SLUICE_LIMITER_SNAPSHOT_MAX_BYTES)',
      );
    saidLeftOut = written.leftOut > 0;
    return saved;
  };
  const tick = () => {
    if (saving) return;
    saving = save()
      .then(
        () => undefined,
        (error: unknown) => logger.warn({ err: error }, 'saving the limiter state failed: retried at the next save'),
      )
      .finally(() => {
        saving = undefined;
      });
  };
  const timer = setInterval(tick, settings.limiterSnapshotMs);
  timer.unref();
  return {
    async close({ save: saveNow } = { save: true }) {
      clearInterval(timer);
      await saving;
      if (!saveNow) return;
      try {
        logger.info(await save(), 'limiter state saved (bans and counts)');
      } catch (error) {
        logger.warn({ err: error }, 'saving the limiter state at shutdown failed: a restart forgets bans and counts');
      }
    },
  };
}
