/**
 * Quiet hours: local times of day, in an IANA time zone, when a tenant channel's messages are held
 * back and sent at the window's end. Local times are read and made through `Intl` (the zone
 * database of the runtime), so daylight-saving changes move the windows with the clocks:
 * `21:00–08:00` in `America/New_York` is 21:00–08:00 on the wall on both sides of a transition.
 * A window end that does not exist on its day (in a spring-forward gap) is read as the wall time
 * that far after the gap's start, as `Temporal` does by default; one that exists twice (fall back)
 * ends at its first occurrence after the message's time.
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

/** When the window holding `at` ends (epoch ms, after `at`), or undefined when `at` is in none. */
function endOfWindowAt(quiet: QuietHours, at: number): number | undefined {
  const wall = wallOf(quiet.timeZone, at);
  const midnight = Math.floor(wall / DAY_MS) * DAY_MS;
  const minute = Math.floor((wall - midnight) / 60_000);
  let end: number | undefined;
  for (const window of quiet.windows) {
    const from = minutesOf(window.from);
    const to = minutesOf(window.to);
    let endWall: number | undefined;
    if (from < to) {
      if (minute >= from && minute < to) endWall = midnight + to * 60_000;
    } else if (from > to) {
      if (minute >= from) endWall = midnight + DAY_MS + to * 60_000;
      else if (minute < to) endWall = midnight + to * 60_000;
    }
    if (endWall === undefined) continue;
    const instant = instantsOf(quiet.timeZone, endWall).find((candidate) => candidate > at);
    if (instant !== undefined && (end === undefined || instant > end)) end = instant;
  }
  return end;
}

/**
 * The time a message due at `dueAt` may be sent: `dueAt` itself outside every window, else the end
 * of the window(s) holding it (windows that touch or overlap are followed to their last end).
 */
export function quietHoursRelease(quiet: QuietHours, dueAt: number): number {
  let at = dueAt;
  for (let hop = 0; hop < 16; hop++) {
    const end = endOfWindowAt(quiet, at);
    if (end === undefined) return at;
    at = end;
  }
  return at;
}
