/** What a new tenant starts with: part of {@link SETTINGS}. */
import { spec } from './spec.js';

/** The longest window or ban a rule may have (the admin API's bound): 400 days. */
const MAX_SECONDS = 400 * 86_400;

/** One rule of SLUICE_NEW_TENANT_RULES, in the admin API's units. */
export interface NewTenantRule {
  windowSeconds: number;
  limit: number;
  banSeconds: number;
}

/** `WINDOW_SECONDS:LIMIT[:BAN_SECONDS]` → a rule, or a problem naming the item. */
function parseItem(item: string): NewTenantRule | string {
  const match = /^(\d+):(\d+)(?::(\d+))?$/.exec(item);
  const [windowSeconds, limit, banSeconds] = match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : [];
  if (
    windowSeconds === undefined ||
    limit === undefined ||
    banSeconds === undefined ||
    windowSeconds < 1 ||
    windowSeconds > MAX_SECONDS ||
    limit < 1 ||
    limit > 1_000_000_000 ||
    banSeconds > MAX_SECONDS
  )
    return `SLUICE_NEW_TENANT_RULES: "${item}" is not WINDOW_SECONDS:LIMIT[:BAN_SECONDS] (window 1 to ${MAX_SECONDS} s, limit 1 to 1e9, ban 0 to ${MAX_SECONDS} s)`;
  return { windowSeconds, limit, banSeconds };
}

/** The rules of SLUICE_NEW_TENANT_RULES (empty for `none`); the setting was checked when loaded. */
export function newTenantRules(items: readonly string[]): NewTenantRule[] {
  if (items.length === 1 && items[0] === 'none') return [];
  return items.map(parseItem).filter((rule): rule is NewTenantRule => typeof rule !== 'string');
}

export const TENANT_SETTINGS = {
  newTenantRules: spec({
    env: 'SLUICE_NEW_TENANT_RULES',
    kind: 'list',
    default: ['60:3:600', '3600:10:600', '86400:50:600'],
    check: (items: string[]) => {
      if (items.length === 1 && items[0] === 'none') return undefined;
      if (items.length > 16) return 'SLUICE_NEW_TENANT_RULES: at most 16 rules';
      return items.map(parseItem).find((rule): rule is string => typeof rule === 'string');
    },
    description:
      'The frequency rules a new tenant gets for sms and email, whoever creates it (admin API, CLI, console): comma-separated `WINDOW_SECONDS:LIMIT[:BAN_SECONDS]`; by default the seed rules, 3 a minute, 10 an hour and 50 a day to one recipient, a breach banning the recipient 10 minutes. `none`: no rules, so sends to one recipient are unlimited until rules are set (the answer to the creation, `tenant create` and the console warn). The webhook channel gets none. Changing it changes no tenant created before.',
  }),
};
