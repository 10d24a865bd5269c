import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { QuietHoursLookup } from '../ports.js';
import { quietHoursRelease } from '../quiet-hours.js';

/**
 * A message that would be sent inside its tenant channel's quiet hours (now, or at its `sendAt`)
 * is scheduled for the window's end instead: status `scheduled`, its `dueAt` moved, and the
 * answer says `deferredBy: quiet-hours`. With `applies: bulk` only bulk messages wait. It runs
 * after validation (which set the due time) and before frequency, so the recipient's rules count
 * the message when it is really sent. Quiet hours leaving no time to send (a set stored before
 * such sets were refused) refuse the message: 409 CONFLICT.
 */
export function quietHoursInterceptor(quietHours: QuietHoursLookup): Interceptor {
  return {
    name: 'quiet-hours',
    async run(context) {
      const message = context.message!;
      const quiet = await quietHours.get(context.tenant!.id, message.channel);
      if (!quiet || quiet.windows.length === 0) return undefined;
      if (quiet.applies === 'bulk' && message.priority !== 'bulk') return undefined;
      const release = quietHoursRelease(quiet, message.dueAt);
      if (release === undefined) {
        // A set stored before sets covering the whole day were refused: no time would ever come.
        throw new SluiceError(
          'CONFLICT',
          `the tenant's ${message.channel} quiet hours cover the whole day: no time is left to send; an admin must change them`,
          { details: { reason: 'quiet-hours' } },
        );
      }
      if (release > message.dueAt) {
        message.dueAt = release;
        message.scheduled = true;
        message.deferredBy = 'quiet-hours';
      }
      return undefined;
    },
  };
}
