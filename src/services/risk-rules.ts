/**
 * Risk rule sets between their stored and HTTP shape (seconds, as written) and the library's
 * (milliseconds, defaults filled in): one conversion, one validation, errors naming the field.
 */
import { SluiceError } from '../core/errors.js';
import { checkRiskStateBytes, normalizeRiskRules, RISK_KINDS, type RiskRule, RiskRuleError } from '../limiter/index.js';
import type { RiskRuleView } from './views.js';

/** The library's field names back in the API's (`rules[0].windowMs` → `rules[0].windowSeconds`). */
const apiField = (field: string) => field.replace(/\.windowMs$/, '.windowSeconds').replace(/\.banMs$/, '.banSeconds');

/** The parameters each kind takes beside name, kind, key, mode and effect, as the API names them (its descriptor's, in seconds). */
const KIND_PARAMETERS = new Map(
  Object.values(RISK_KINDS).map((kind) => [kind.name as string, kind.parameters.map((parameter) => apiField(`.${parameter}`).slice(1))]),
);
const COMMON = new Set(['name', 'kind', 'key', 'mode', 'effect']);

/**
 * Validates a rule set as the API and the CLI take it and converts it to the library's form.
 * @throws SluiceError INVALID_REQUEST naming the field (a missing parameter, one another kind takes,
 *   m > n, a repeated name...).
 */
export function riskRulesOf(views: readonly RiskRuleView[]): RiskRule[] {
  const library = views.map((view, index) => {
    const allowed = KIND_PARAMETERS.get(view.kind) ?? [];
    for (const field of Object.keys(view)) {
      if (!COMMON.has(field) && !allowed.includes(field)) {
        throw new SluiceError('INVALID_REQUEST', `rules[${index}].${field}: a ${view.kind} rule takes no ${field}`, {
          details: { field: `rules[${index}].${field}` },
        });
      }
    }
    const { windowSeconds, banSeconds, ...rest } = view;
    return {
      ...rest,
      ...(windowSeconds === undefined ? {} : { windowMs: windowSeconds * 1000 }),
      ...(banSeconds === undefined ? {} : { banMs: banSeconds * 1000 }),
    };
  });
  try {
    return normalizeRiskRules(library);
  } catch (error) {
    throw asInvalidRequest(error);
  }
}

/**
 * Refuses a rule set whose state for one event's values may exceed `maxBytes`
 * (`SLUICE_RISK_STATE_MAX_BYTES`): only where a set is written (PUT, the CLI), so a set stored
 * under a larger cap stays in force.
 * @throws SluiceError INVALID_REQUEST naming the rule (or `rules`), its bytes and the cap.
 */
export function checkRiskState(rules: readonly RiskRule[], maxBytes: number): void {
  try {
    checkRiskStateBytes(rules, maxBytes, 'SLUICE_RISK_STATE_MAX_BYTES');
  } catch (error) {
    throw asInvalidRequest(error);
  }
}

/** A RiskRuleError as the 400 that names its field; any other error unchanged. */
export function asInvalidRequest(error: unknown): unknown {
  if (!(error instanceof RiskRuleError)) return error;
  const field = apiField(error.field);
  return new SluiceError('INVALID_REQUEST', `${field}: ${error.message.slice(error.field.length + 2)}`, { details: { field } });
}
