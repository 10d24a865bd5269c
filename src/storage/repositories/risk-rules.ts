/**
 * Risk rule sets, one per (tenant, action). A write replaces the whole set and bumps `version`;
 * the upsert is the portable UPDATE-then-INSERT of the channel rule sets (`rules.ts`).
 */
import { type Clock, systemClock } from '../../limiter/clock.js';
import type { Database } from '../database.js';
import { isTransientConflict, isUniqueViolation } from '../errors.js';
import type { RiskRuleSetsTable, StoredRiskRule } from '../schema.js';

export interface RiskRuleSet {
  tenantId: string;
  action: string;
  rules: StoredRiskRule[];
  version: number;
  updatedAt: number;
}

const toRiskRuleSet = (row: RiskRuleSetsTable): RiskRuleSet => ({
  tenantId: row.tenant_id,
  action: row.action,
  rules: JSON.parse(row.rules) as StoredRiskRule[],
  version: Number(row.version),
  updatedAt: Number(row.updated_at),
});

export class RiskRulesRepository {
  private readonly clock: Clock;

  constructor(
    private readonly database: Database,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async get(tenantId: string, action: string): Promise<RiskRuleSet | undefined> {
    const row = await this.database.db
      .selectFrom('risk_rule_sets')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('action', '=', action)
      .executeTakeFirst();
    return row && toRiskRuleSet(row);
  }

  /** Every action's set of a tenant, by action. */
  async listForTenant(tenantId: string): Promise<RiskRuleSet[]> {
    const rows = await this.database.db
      .selectFrom('risk_rule_sets')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('action')
      .execute();
    return rows.map(toRiskRuleSet);
  }

  /**
   * Replaces the set of (tenant, action): version 1 on the first write, +1 after. Validation is
   * the caller's. Fails with a foreign-key error when the tenant does not exist.
   */
  async set(tenantId: string, action: string, rules: StoredRiskRule[]): Promise<RiskRuleSet> {
    const now = this.clock.now();
    const json = JSON.stringify(rules);
    const attempt = () =>
      this.database.db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('risk_rule_sets')
          .set((eb) => ({ rules: json, version: eb('version', '+', 1), updated_at: now }))
          .where('tenant_id', '=', tenantId)
          .where('action', '=', action)
          .executeTakeFirst();
        if (updated.numUpdatedRows === 0n) {
          await trx
            .insertInto('risk_rule_sets')
            .values({ tenant_id: tenantId, action, rules: json, version: 1, updated_at: now })
            .execute();
        }
        return trx
          .selectFrom('risk_rule_sets')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('action', '=', action)
          .executeTakeFirstOrThrow();
      });
    for (let tries = 1; ; tries++) {
      try {
        return toRiskRuleSet(await attempt());
      } catch (error) {
        // A concurrent first write inserted between our UPDATE and INSERT: UPDATE matches now.
        if (tries >= 3 || !(isUniqueViolation(error) || isTransientConflict(error))) throw error;
      }
    }
  }

  /** @returns whether a set existed. */
  async delete(tenantId: string, action: string): Promise<boolean> {
    const result = await this.database.db
      .deleteFrom('risk_rule_sets')
      .where('tenant_id', '=', tenantId)
      .where('action', '=', action)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
