/**
 * The rules of the ban race (race-child.ts `ban-check`): two windows on one phone, limit 10 and
 * limit 12 banning 60 s. An admission the limit-10 rule takes back must never count towards the
 * limit-12 rule's ban.
 */
import { normalizeRiskRules } from '../../../src/limiter/events/rules.js';

export const BAN_RULES = normalizeRiskRules([
  { name: 'ten', kind: 'window', key: ['phone'], windowMs: 3_600_000, limit: 10 },
  { name: 'twelve-ban', kind: 'window', key: ['phone'], windowMs: 3_600_000, limit: 12, banMs: 60_000 },
]);
