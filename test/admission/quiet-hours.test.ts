import { describe, expect, it } from 'vitest';
import { type QuietHours, quietHoursRelease } from '../../src/admission/quiet-hours.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const night = (timeZone: string, from = '21:00', to = '08:00'): QuietHours => ({ timeZone, windows: [{ from, to }], applies: 'all' });

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
});
