/** Lifting a recipient's ban on a tenant channel (admin token); its status is a lookup (`lookups.ts`). */
import { Type } from '@sinclair/typebox';
import { ChannelName } from './common.js';

export const BanParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  channel: ChannelName,
  to: Type.String({ minLength: 1, maxLength: 320 }),
});

export const LiftBanQuery = Type.Object({
  resetCounts: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        "true: also forget what the recipient's rules have counted, so the sends that led to the ban do not refuse (and ban) the next one",
    }),
  ),
});

export const BanLifted = Type.Object({
  lifted: Type.Boolean({ description: 'Whether a ban record was still stored: a ban in force, or (Redis) one that ended moments ago' }),
});
