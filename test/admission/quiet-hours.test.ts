import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coversWholeDay, type QuietHours, type QuietWindow, quietHoursRelease } from '../../src/admission/quiet-hours.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? 'never' : new Date(ms).toISOString());
const night = (timeZone: string, from = '21:00', to = '08:00'): QuietHours => ({ timeZone, windows: [{ from, to }], applies: 'all' });

// The windows' meaning, read here apart from the code under test.
const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const heldAt = (windows: QuietWindow[], minute: number) =>
  windows.some(({ from, to }) => {
    const [f, t] = [minutesOf(from), minutesOf(to)];
    return f < t ? minute >= f && minute < t : f > t && (minute >= f || minute < t);
  });
/** The local minute of the day (0 to 1439) of `instant` in `timeZone`. */
const wallMinute = (timeZone: string, instant: number) => {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', hour: 'numeric', minute: 'numeric' }).formatToParts(instant);
  return Number(parts.find((part) => part.type === 'hour')!.value) * 60 + Number(parts.find((part) => part.type === 'minute')!.value);
};

describe('quiet hours', () => {
  it('Asia/Shanghai 21:00–08:00: across midnight, before and after it, and outside', () => {
    const quiet = night('Asia/Shanghai');
    // 22:30 local (14:30Z) → 08:00 the next local day (00:00Z).
    expect(iso(quietHoursRelease(quiet, at('2026-03-10T14:30:00Z')))).toBe('2026-03-11T00:00:00.000Z');
    // 03:00 local (19:00Z the day before) → 08:00 the same local day.
    expect(iso(quietHoursRelease(quiet, at('2026-03-10T19:00:00Z')))).toBe('2026-03-11T00:00:00.000Z');
    // 21:00 sharp is inside, 08:00 sharp is outside.
    expect(iso(quietHoursRelease(quiet, at('2026-03-10T13:00:00Z')))).toBe('2026-03-11T00:00:00.000Z');
    expect(quietHoursRelease(quiet, at('2026-03-11T00:00:00Z'))).toBe(at('2026-03-11T00:00:00Z'));
    // 12:00 local: untouched.
    expect(quietHoursRelease(quiet, at('2026-03-11T04:00:00Z'))).toBe(at('2026-03-11T04:00:00Z'));
  });

  it('America/New_York, spring forward (8 March 2026, 02:00 → 03:00): the window ends at 08:00 EDT', () => {
    const quiet = night('America/New_York');
    // 23:00 EST on 7 March (04:00Z 8 March) → 08:00 EDT = 12:00Z: 8 hours of wall time, 8 hours real minus the lost hour.
    expect(iso(quietHoursRelease(quiet, at('2026-03-08T04:00:00Z')))).toBe('2026-03-08T12:00:00.000Z');
    // 01:30 EST (06:30Z), just before the jump.
    expect(iso(quietHoursRelease(quiet, at('2026-03-08T06:30:00Z')))).toBe('2026-03-08T12:00:00.000Z');
    // A window ending in the gap (02:30 does not exist that night) ends at 03:30 EDT.
    const gap = night('America/New_York', '01:00', '02:30');
    expect(iso(quietHoursRelease(gap, at('2026-03-08T06:15:00Z')))).toBe('2026-03-08T07:30:00.000Z');
  });

  it('America/New_York, fall back (1 November 2026, 02:00 → 01:00): the window ends at 08:00 EST', () => {
    const quiet = night('America/New_York');
    // 23:00 EDT on 31 October (03:00Z) → 08:00 EST = 13:00Z.
    expect(iso(quietHoursRelease(quiet, at('2026-11-01T03:00:00Z')))).toBe('2026-11-01T13:00:00.000Z');
    // A window ending at 01:30, which happens twice: the first occurrence after the message.
    const repeated = night('America/New_York', '01:00', '01:30');
    expect(iso(quietHoursRelease(repeated, at('2026-11-01T05:10:00Z')))).toBe('2026-11-01T05:30:00.000Z'); // 01:10 EDT → 01:30 EDT
    expect(iso(quietHoursRelease(repeated, at('2026-11-01T06:10:00Z')))).toBe('2026-11-01T06:30:00.000Z'); // 01:10 EST → 01:30 EST
  });

  it('Europe/Berlin at both transitions', () => {
    const quiet = night('Europe/Berlin', '22:00', '07:00');
    // 29 March 2026, 02:00 CET → 03:00 CEST: 23:00 CET (22:00Z) → 07:00 CEST (05:00Z).
    expect(iso(quietHoursRelease(quiet, at('2026-03-28T22:00:00Z')))).toBe('2026-03-29T05:00:00.000Z');
    // 25 October 2026, 03:00 CEST → 02:00 CET: 23:00 CEST (21:00Z) → 07:00 CET (06:00Z).
    expect(iso(quietHoursRelease(quiet, at('2026-10-24T21:00:00Z')))).toBe('2026-10-25T06:00:00.000Z');
  });

  it('follows touching windows to the last end, and several windows per day', () => {
    const quiet: QuietHours = {
      timeZone: 'UTC',
      windows: [
        { from: '12:00', to: '13:00' },
        { from: '13:00', to: '14:00' },
        { from: '22:00', to: '06:00' },
      ],
      applies: 'all',
    };
    expect(iso(quietHoursRelease(quiet, at('2026-05-01T12:30:00Z')))).toBe('2026-05-01T14:00:00.000Z');
    expect(iso(quietHoursRelease(quiet, at('2026-05-01T23:59:00Z')))).toBe('2026-05-02T06:00:00.000Z');
    expect(quietHoursRelease(quiet, at('2026-05-01T10:00:00Z'))).toBe(at('2026-05-01T10:00:00Z'));
  });

  it('windows combine as their union: a set covering the whole day, with overlaps or across midnight, is recognised', () => {
    const windows = (...pairs: [string, string][]): QuietWindow[] => pairs.map(([from, to]) => ({ from, to }));
    expect(coversWholeDay(windows(['00:00', '12:00'], ['12:00', '00:00']))).toBe(true);
    expect(coversWholeDay(windows(['21:00', '08:00'], ['08:00', '21:00']))).toBe(true);
    expect(coversWholeDay(windows(['06:00', '23:00'], ['22:00', '07:00']))).toBe(true);
    expect(coversWholeDay(windows(['00:00', '23:59'], ['23:59', '00:00']))).toBe(true);
    expect(coversWholeDay(windows(['00:00', '23:59']))).toBe(false); // 23:59 is free
    expect(coversWholeDay(windows(['00:01', '00:00']))).toBe(false); // across midnight to 00:00: 00:00 is free
    expect(coversWholeDay(windows(['09:00', '12:00'], ['12:01', '09:00']))).toBe(false); // 12:00 is free
    expect(coversWholeDay(windows(['09:00', '09:00']))).toBe(false); // empty
    expect(coversWholeDay([])).toBe(false);
  });

  it('a stored set covering the whole day releases nothing, instead of a time inside quiet hours', () => {
    const quiet: QuietHours = {
      timeZone: 'Asia/Shanghai',
      windows: [
        { from: '00:00', to: '12:00' },
        { from: '12:00', to: '00:00' },
      ],
      applies: 'all',
    };
    expect(quietHoursRelease(quiet, at('2026-05-01T10:00:00Z'))).toBeUndefined();
    const overlapping: QuietHours = {
      timeZone: 'UTC',
      windows: [
        { from: '06:00', to: '23:00' },
        { from: '22:00', to: '07:00' },
      ],
      applies: 'all',
    };
    expect(quietHoursRelease(overlapping, at('2026-05-01T10:00:00Z'))).toBeUndefined();
  });

  it('eight chained windows release at the end of the last', () => {
    const windows = Array.from({ length: 8 }, (_, hour) => ({ from: `0${hour}:00`, to: `0${hour + 1}:00` }));
    expect(iso(quietHoursRelease({ timeZone: 'UTC', windows, applies: 'all' }, at('2026-05-01T00:30:00Z')))).toBe(
      '2026-05-01T08:00:00.000Z',
    );
  });

  it('free minutes only in the hour a spring-forward skips: the message waits for the next day', () => {
    const quiet = night('America/New_York', '03:00', '02:00');
    // 23:00 EST on 7 March: 02:00 on 8 March does not exist (its 02:00 reads as 03:00 EDT, quiet), so 02:00 EDT on 9 March.
    expect(iso(quietHoursRelease(quiet, at('2026-03-08T04:00:00Z')))).toBe('2026-03-09T06:00:00.000Z');
    // On an ordinary night the free hour is there.
    expect(iso(quietHoursRelease(quiet, at('2026-03-15T03:00:00Z')))).toBe('2026-03-15T06:00:00.000Z');
  });

  it('any set leaving a minute free releases within two days, at a free minute, in zones with and without daylight saving', () => {
    const time = fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 0, 15, 30, 59))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    const zone = fc.constantFrom('America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Shanghai', 'UTC');
    // Instants around the 2026 transitions of those zones, and anywhere in the year.
    const instant = fc.oneof(
      fc
        .constantFrom(
          '2026-03-08T06:30:00Z',
          '2026-11-01T05:45:00Z',
          '2026-03-29T00:59:00Z',
          '2026-10-25T00:30:00Z',
          '2026-04-04T14:40:00Z',
          '2026-10-03T15:10:00Z',
          '2026-04-05T02:30:00Z',
          '2026-09-06T03:30:00Z',
        )
        .chain((around) => fc.integer({ min: -36 * 60, max: 36 * 60 }).map((minutes) => Date.parse(around) + minutes * 60_000)),
      fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-01-01T00:00:00Z') }),
    );
    const windows = fc.array(fc.record({ from: time, to: time }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(zone, windows, instant, (timeZone, windows, dueAt) => {
        const quiet: QuietHours = { timeZone, windows, applies: 'all' };
        const release = quietHoursRelease(quiet, dueAt);
        const wholeDay = Array.from({ length: 1440 }, (_, minute) => minute).every((minute) => heldAt(windows, minute));
        expect(coversWholeDay(windows)).toBe(wholeDay);
        if (wholeDay) return release === undefined;
        if (release === undefined || release > dueAt + 2 * 86_400_000) return false;
        // Held exactly when due inside a window, and released at a minute no window holds.
        return release > dueAt === heldAt(windows, wallMinute(timeZone, dueAt)) && !heldAt(windows, wallMinute(timeZone, release));
      }),
      { numRuns: 1000 },
    );
  });
});
