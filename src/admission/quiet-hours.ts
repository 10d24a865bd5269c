/**
 * Quiet hours: local times of day, in an IANA time zone, when a tenant channel's messages are held
 * back and sent at the window's end. Local times are read and made through `Intl` (the zone
 * database of the runtime), so daylight-saving changes move the windows with the clocks:
 * `21:00–08:00` in `America/New_York` is 21:00–08:00 on the wall on both sides of a transition.
 * A window end that does not exist on its day (in a spring-forward gap) is read as the wall time
 * that far after the gap's start, as `Temporal` does by default; one that exists twice (fall back)
 * ends at its first occurrence after the message's time. The windows act as their union: a message
 * waits for the first local minute outside all of them, and a set covering the whole day has none.
 */

/** One window, `from` to `to`, local `HH:MM`; `from` later than `to` crosses midnight. */
export interface QuietWindow {
  from: string;
  to: string;
}

export interface QuietHours {
  /** An IANA zone name (`Asia/Shanghai`, `Europe/Berlin`). */
  timeZone: string;
  windows: QuietWindow[];
  /** `bulk`: only bulk messages wait; `all`: transactional ones too. */
  applies: 'bulk' | 'all';
}

export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;
const DAY_MS = 86_400_000;
const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formats.size < 1000) formats.set(timeZone, format);
  }
  return format;
}

/** True when `timeZone` is a zone the runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of `instant` in `timeZone`, as if that wall clock were UTC (ms). */
function wallOf(timeZone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatFor(timeZone).formatToParts(instant)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return (
    Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) + (((instant % 1000) + 1000) % 1000)
  );
}

/** The instants whose wall clock in `timeZone` reads `wall`, earliest first (two in a fall-back hour); in a gap, the gap-shifted one. */
function instantsOf(timeZone: string, wall: number): number[] {
  const offsets = new Set([
    wallOf(timeZone, wall - DAY_MS / 2) - (wall - DAY_MS / 2),
    wallOf(timeZone, wall + DAY_MS / 2) - (wall + DAY_MS / 2),
  ]);
  const found = [...offsets].map((offset) => wall - offset).filter((instant) => wallOf(timeZone, instant) === wall);
  if (found.length > 0) return found.sort((a, b) => a - b);
  // A gap: the earlier offset carries the wall time past it.
  return [wall - (wallOf(timeZone, wall - DAY_MS / 2) - (wall - DAY_MS / 2))];
}

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const DAY_MINUTES = 1440;
const coverages = new WeakMap<readonly QuietWindow[], Uint8Array>();

/**
 * The minutes of the local day (0 = 00:00 … 1439 = 23:59) inside some window: 1 inside, 0 free.
 * Windows combine as their union (overlapping, touching and midnight-crossing alike); a window
 * from a time to the same time, or with a time that is not `HH:MM`, covers nothing.
 */
function coverageOf(windows: readonly QuietWindow[]): Uint8Array {
  let covered = coverages.get(windows);
  if (covered === undefined) {
    covered = new Uint8Array(DAY_MINUTES);
    for (const window of windows) {
      if (!TIME_OF_DAY.test(window.from) || !TIME_OF_DAY.test(window.to)) continue;
      const from = minutesOf(window.from);
      const to = minutesOf(window.to);
      const length = (to - from + DAY_MINUTES) % DAY_MINUTES;
      for (let minute = 0; minute < length; minute++) covered[(from + minute) % DAY_MINUTES] = 1;
    }
    coverages.set(windows, covered);
  }
  return covered;
}

/**
 * True when the windows together cover every minute of the local day, leaving no time to send.
 * Wall-clock minutes cover every instant whatever the zone's daylight-saving changes, so such a set
 * holds a message forever in every zone; any other set frees a minute every day (on a spring-forward
 * day the free minutes may all fall in the skipped hour: a message then waits for the next day).
 */
export function coversWholeDay(windows: readonly QuietWindow[]): boolean {
  return coverageOf(windows).indexOf(0) === -1;
}

/**
 * When the quiet time holding `at` ends (epoch ms, after `at`): the first free minute after it,
 * found on the union of the windows; `at` itself when it is free; undefined when no minute is free
 * (or no instant after `at` shows that minute, which the zone rules never produce).
 */
function endOfQuietAt(quiet: QuietHours, covered: Uint8Array, at: number): number | undefined {
  const wall = wallOf(quiet.timeZone, at);
  const midnight = Math.floor(wall / DAY_MS) * DAY_MS;
  const minute = Math.floor((wall - midnight) / 60_000);
  if (covered[minute] === 0) return at;
  let free = minute + 1;
  while (free < minute + DAY_MINUTES && covered[free % DAY_MINUTES] === 1) free++;
  if (free === minute + DAY_MINUTES) return undefined;
  return instantsOf(quiet.timeZone, midnight + free * 60_000).find((candidate) => candidate > at);
}

/**
 * Steps of {@link quietHoursRelease}. The first moves to the first free wall minute after the quiet
 * time holding the message; that instant is free unless the minute fell in a spring-forward gap and
 * was read as a later, covered time: then the second moves past the gap, to a minute that exists.
 * A third step finds it free; the fourth is to spare. A set needing more (no zone's rules make one)
 * gets no release rather than one inside quiet hours.
 */
const MAX_HOPS = 4;

/**
 * The time a message due at `dueAt` may be sent: `dueAt` itself outside every window, else the
 * first free minute after the union of the windows holding it. Undefined when the windows leave no
 * time to send ({@link coversWholeDay}): a caller never releases a message inside quiet hours.
 * Cost: at most {@link MAX_HOPS} steps of a few `Intl` conversions and a scan of 1,440 minutes.
 */
export function quietHoursRelease(quiet: QuietHours, dueAt: number): number | undefined {
  const covered = coverageOf(quiet.windows);
  let at = dueAt;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const end = endOfQuietAt(quiet, covered, at);
    if (end === undefined || end === at) return end;
    at = end;
  }
  return undefined;
}
