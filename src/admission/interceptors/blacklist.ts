import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { BlacklistLookup } from '../ports.js';

/** Recipients on the tenant's or the global blacklist get nothing; entries are canonical keys, as the message's `recipientKey`. */
export function blacklistInterceptor(blacklist: BlacklistLookup): Interceptor {
  return {
    name: 'blacklist',
    async run(context) {
      const message = context.message!;
      if (await blacklist.isBlacklisted(context.tenant!.id, message.channel, message.recipientKey)) {
        throw new SluiceError('BLACKLISTED', `the recipient is blacklisted on ${message.channel}`);
      }
      return undefined;
    },
  };
}
