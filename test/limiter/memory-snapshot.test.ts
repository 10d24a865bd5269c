/**
 * The in-process store's snapshot under a flood (issue 33, item 1): one owner's many long subjects
 * (lone surrogates, six bytes each once written as JSON) must not push another owner's ban out
 * of a snapshot bounded in bytes, the snapshot stays within its bytes, and writing it pauses
 * every few milliseconds instead of holding the event loop for the whole store.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, MemoryStore, type NormalizedRule } from '../../src/limiter/index.js';

const DAY = 86_400_000;
const month: NormalizedRule[] = [{ windowMs: 31 * DAY, limit: 1, banMs: 0, algorithm: 'sliding-log' }];
const strict: NormalizedRule[] = [{ windowMs: 60_000, limit: 1, banMs: 600_000, algorithm: 'sliding-log' }];
const ownerOf = (subject: string) => subject.slice(0, subject.indexOf(':'));
/** 240 lone surrogates: 240 characters, 1,440 bytes of JSON. */
const surrogates = '\ud800'.repeat(240);

/** `count` subjects of `owner`, each with a long key and a long request id, on a 31-day rule. */
async function flood(store: MemoryStore, owner: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++)
    await store.check({ subject: `${owner}:${n}:${surrogates}`, rules: month, requestId: `${n}-${'r'.repeat(120)}`, now: undefined });
}

/** Bans `subject` (two checks on a limit of one). */
async function ban(store: MemoryStore, subject: string): Promise<void> {
  await store.check({ subject, rules: strict, requestId: 'first', now: undefined });
  expect(await store.check({ subject, rules: strict, requestId: 'second', now: undefined })).toMatchObject({ code: 'RATE_LIMITED' });
}

describe('a snapshot of the in-process store under a flood', () => {
  it("keeps a victim's ban made after a flood of long subjects, within its bytes", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, ownerOf });
    await flood(store, 'attacker', 3_000);
    clock.advance(1000);
    await ban(store, 'victim:+8613800000001');
    const maxBytes = 1_048_576;
    const written = await store.snapshotJson({ maxEntries: 100_000, maxBytes });
    expect(written.bytes).toBe(Buffer.byteLength(written.body));
    expect(written.bytes).toBeLessThanOrEqual(maxBytes);
    // Not all or nothing: what fits is kept, the rest is left out.
    expect(written.subjects).toBeGreaterThan(100);
    expect(written.leftOut).toBe(3_001 - written.subjects);
    expect(written.bans).toBe(1);

    clock.advance(60_000);
    const restored = new MemoryStore({ clock, ownerOf });
    expect(restored.restore(JSON.parse(written.body))).toBe(written.subjects);
    expect(await restored.check({ subject: 'victim:+8613800000001', rules: strict, requestId: 'third', now: undefined })).toMatchObject({
      code: 'BANNED',
      retryAfterMs: 540_000,
    });
  });

  it("keeps the other owners' bans when one owner's own bans alone overflow it: owners take turns", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, ownerOf });
    for (let n = 0; n < 400; n++) await ban(store, `attacker:${n}:${surrogates}`);
    clock.advance(1000);
    for (let n = 0; n < 5; n++) await ban(store, `victim:+86138000000${n}`);
    await flood(store, 'victim', 1);
    const snapshot = store.snapshot({ maxEntries: 100_000, maxBytes: 65_536 });
    const kept = snapshot.subjects.map((subject) => subject.s);
    for (let n = 0; n < 5; n++) expect(kept).toContain(`victim:+86138000000${n}`);
    // Bans first: the victim's unbanned subject comes after every ban, and here finds no room.
    expect(snapshot.subjects.every((subject) => subject.b)).toBe(true);
    expect(kept.filter((subject) => subject.startsWith('attacker:')).length).toBeGreaterThan(10);
    expect(Buffer.byteLength(JSON.stringify(snapshot))).toBeLessThanOrEqual(65_536);
  });

  it("keeps a victim's ban when the flood is of log entries and the entry bound ends the snapshot", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, ownerOf });
    const many: NormalizedRule[] = [{ windowMs: DAY, limit: 1_000, banMs: 0, algorithm: 'sliding-log' }];
    for (let n = 0; n < 50; n++)
      for (let i = 0; i < 200; i++) await store.check({ subject: `attacker:${n}`, rules: many, requestId: `${n}-${i}`, now: undefined });
    clock.advance(1000);
    await ban(store, 'victim:+8613800000001');
    const snapshot = store.snapshot({ maxEntries: 1_000 });
    expect(snapshot.subjects[0]?.s).toBe('victim:+8613800000001');
    const entries = snapshot.subjects.reduce((sum, subject) => sum + 1 + (subject.l?.length ?? 0) + (subject.f?.length ?? 0), 0);
    expect(entries).toBeLessThanOrEqual(1_000);
    expect(entries).toBeGreaterThan(900);
  });

  it('keeps the most recently checked subjects first', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, ownerOf });
    for (let n = 0; n < 3_000; n++) {
      await store.check({ subject: `t:${n}`, rules: month, requestId: `r${n}`, now: undefined });
      clock.advance(1);
    }
    // Checked again last, though created first.
    await store.check({ subject: 't:0', rules: month, requestId: 'again', now: undefined });
    const kept = store.snapshot({ maxEntries: 1000 }).subjects.map((subject) => subject.s);
    expect(kept[0]).toBe('t:0');
    expect(kept).toContain('t:2999');
    expect(kept).not.toContain('t:1');
  });

  it('pauses every few milliseconds while it is written', async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryStore({ clock, ownerOf });
    await flood(store, 'attacker', 20_000);
    const bounds = { maxEntries: 100_000, maxBytes: 15_728_640 };
    // A pause offered after every few subjects (sliceMs 0 takes each): none writes the store at once.
    let offered = 0;
    const all = await store.snapshotJson(bounds, { sliceMs: 0, pause: async () => void offered++ });
    expect(all.subjects).toBeGreaterThan(5_000);
    expect(offered).toBeGreaterThan(all.subjects / 20);

    // At the default slice, wall time on a shared machine: most slices within a few ms.
    const slices: number[] = [];
    let resumed = performance.now();
    await store.snapshotJson(bounds, {
      pause: async () => {
        slices.push(performance.now() - resumed);
        await new Promise<void>((resolve) => setImmediate(resolve));
        resumed = performance.now();
      },
    });
    expect(slices.length).toBeGreaterThan(10);
    expect(slices.sort((a, b) => a - b)[slices.length >> 1]).toBeLessThan(25);
  });
});
