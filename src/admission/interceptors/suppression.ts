import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { SuppressionLookup } from '../ports.js';

/**
 * A recipient who opted out (a STOP, an unsubscribe link), bounced or complained, or whom the
 * tenant suppressed, gets nothing of the suppressed category (or of any, for `*`). Before every
 * step that consumes (fraud spend, frequency), so a refused send takes nothing.
 */
export function suppressionInterceptor(suppressions: SuppressionLookup): Interceptor {
  return {
    name: 'suppression',
    async run(context) {
      const message = context.message!;
      const found = await suppressions.suppression(context.tenant!.id, message.channel, message.recipientKey, message.payload.category);
      if (found) {
        const since = new Date(found.since).toISOString();
        throw new SluiceError(
          'RECIPIENT_SUPPRESSED',
          `the recipient is suppressed on ${message.channel}${found.category === '*' ? '' : ` for ${found.category}`} since ${since} (${found.source}${found.reason ? `: ${found.reason}` : ''})`,
          { details: { category: found.category, source: found.source, reason: found.reason, since } },
        );
      }
      return undefined;
    },
  };
}
