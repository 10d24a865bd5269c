/**
 * Frequency rule sets, one per (tenant, channel). A write replaces the whole set and bumps
 * `version`, which config caches compare to drop stale copies. The upsert is portable
 * (UPDATE, then INSERT if nothing matched, retried once if a concurrent writer inserted first)
 * instead of three dialects' ON CONFLICT spellings.
 */
import type { Channel } from '../../core/channels.js';
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Algorithm, Rule } from '../../limiter/index.js';
import type { Database } from '../database.js';
import { isTransientConflict, isUniqueViolation } from '../errors.js';
import type { RuleSetsTable, StoredFallback, StoredRule } from '../schema.js';

/** The limiter's rule of a stored one (seconds to milliseconds, defaults filled in). */
export const toLimiterRule = (rule: StoredRule): Rule => ({
  windowMs: rule.windowSeconds * 1000,
  limit: rule.limit,
  banMs: (rule.banSeconds ?? 0) * 1000,
  algorithm: (rule.algorithm ?? 'sliding-log') as Algorithm,
});

export interface RuleSet {
  tenantId: string;
  channel: Channel;
  rules: StoredRule[];
  /** Degradation policy for this set; `null` = the service default. */
  fallback: StoredFallback | null;
  /** 1 on first write, +1 on each replace. */
  version: number;
  updatedAt: number;
}

function toRuleSet(row: RuleSetsTable): RuleSet {
  return {
    tenantId: row.tenant_id,
    channel: row.channel,
    rules: JSON.parse(row.rules) as StoredRule[],
    fallback: row.fallback === null ? null : (JSON.parse(row.fallback) as StoredFallback),
    version: Number(row.version),
    updatedAt: Number(row.updated_at),
  };
}

export class RulesRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async get(tenantId: string, channel: Channel): Promise<RuleSet | undefined> {
    const row = await this.database.db
      .selectFrom('rule_sets')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    return row && toRuleSet(row);
  }

  /** Every rule set of a tenant, by channel. */
  async listForTenant(tenantId: string): Promise<RuleSet[]> {
    const rows = await this.database.db.selectFrom('rule_sets').selectAll().where('tenant_id', '=', tenantId).orderBy('channel').execute();
    return rows.map(toRuleSet);
  }

  /**
   * Replaces the rule set of (tenant, channel), creating it at version 1 or bumping its version.
   * Validation of the rules is the caller's (HTTP schema, CLI); this stores what it is given.
   * `fallback` omitted keeps the stored policy; `null` clears it.
   * Fails with a foreign-key error when the tenant does not exist.
   * @returns the stored set with its new version.
   */
  async set(tenantId: string, channel: Channel, input: { rules: StoredRule[]; fallback?: StoredFallback | null }): Promise<RuleSet> {
    const now = this.clock.now();
    const rules = JSON.stringify(input.rules);
    const fallback = input.fallback === undefined ? undefined : input.fallback === null ? null : JSON.stringify(input.fallback);
    const attempt = () =>
      this.database.db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('rule_sets')
          .set((eb) => ({
            rules,
            version: eb('version', '+', 1),
            updated_at: now,
            ...(fallback === undefined ? {} : { fallback }),
          }))
          .where('tenant_id', '=', tenantId)
          .where('channel', '=', channel)
          .executeTakeFirst();
        if (updated.numUpdatedRows === 0n) {
          await trx
            .insertInto('rule_sets')
            .values({ tenant_id: tenantId, channel, rules, fallback: fallback ?? null, version: 1, updated_at: now })
            .execute();
        }
        return trx
          .selectFrom('rule_sets')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('channel', '=', channel)
          .executeTakeFirstOrThrow();
      });
    for (let tries = 1; ; tries++) {
      try {
        return toRuleSet(await attempt());
      } catch (error) {
        // A concurrent first write inserted the row between our UPDATE and INSERT (or, on MySQL,
        // both took gap locks and one was chosen as deadlock victim): run again, UPDATE now matches.
        if (tries >= 3 || !(isUniqueViolation(error) || isTransientConflict(error))) throw error;
      }
    }
  }

  /** Removes the rule set (the channel then has no recipient rules). @returns whether one existed. */
  async delete(tenantId: string, channel: Channel): Promise<boolean> {
    const result = await this.database.db
      .deleteFrom('rule_sets')
      .where('tenant_id', '=', tenantId)
      .where('channel', '=', channel)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
