/**
 * The checks of stored JSON (`admission/stored-shapes.ts`), compiled once from the API's schemas:
 * a policy must be what `GET` answers, prices and templates what their `PUT` took. A bad row is
 * logged once per process (and again only if it goes bad another way), not at every request
 * that reads it; the error handler does not log `STORED_DATA_INVALID` again.
 */
import type { Logger } from 'pino';
import type { FraudPolicy, SmsPrices } from '../admission/fraud-policy.js';
import { compileStoredShape, type StoredShapes } from '../admission/stored-shapes.js';
import type { TemplateSpec } from '../admission/templates.js';
import { FraudPolicyView, SmsPricesBody } from '../api/fraud.js';
import { TemplateBody } from '../api/templates.js';

/** Bad rows remembered as logged; past it, the memory starts again (a row may be logged twice). */
const LOGGED_MAX = 10_000;

export function createStoredShapes(logger: Pick<Logger, 'error'>): StoredShapes {
  const logged = new Set<string>();
  const onInvalid = (row: string, problems: string[]) => {
    const key = `${row}\u0000${problems.join('\u0000')}`;
    if (logged.has(key)) return;
    if (logged.size >= LOGGED_MAX) logged.clear();
    logged.add(key);
    logger.error(
      { row, problems, code: 'STORED_DATA_INVALID' },
      'a stored configuration row does not have the shape this build reads; what needs it fails with STORED_DATA_INVALID until it is fixed or saved again',
    );
  };
  return {
    fraudPolicy: compileStoredShape<FraudPolicy>(FraudPolicyView, onInvalid),
    smsPrices: compileStoredShape<SmsPrices>(SmsPricesBody, onInvalid),
    template: compileStoredShape<TemplateSpec>(TemplateBody, onInvalid),
  };
}
