/**
 * Configuration read back from the database (a tenant's fraud policy, the SMS prices, a template
 * version) is checked against the schema its write took before anything uses it: a row written by
 * another build, or edited by hand, is a `STORED_DATA_INVALID` error that names the row, not a
 * `TypeError` deep in every send that reads it. The composition root compiles the checks once,
 * from the API's schemas, and logs each bad row once (`main/stored-shapes.ts`).
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Channel } from '../core/channels.js';
import { SluiceError } from '../core/errors.js';
import type { FraudPolicy, SmsPrices } from './fraud-policy.js';
import type { TemplateSpec } from './templates.js';

/** The check of one kind of stored JSON. */
export interface StoredShape<T> {
  /** `value` as `T` when it has the shape; else throws `STORED_DATA_INVALID` naming `row`. */
  read(row: string, value: unknown): T;
}

/** Every kind of stored JSON that is read back. */
export interface StoredShapes {
  fraudPolicy: StoredShape<FraudPolicy>;
  smsPrices: StoredShape<SmsPrices>;
  template: StoredShape<TemplateSpec>;
}

/** How a row is named in the error and the log: table, then its key. */
export const storedRow = {
  fraudPolicy: (tenantId: string, channel: Channel) => `fraud_policies/${tenantId}/${channel}`,
  prices: (channel: string) => `prices/${channel}`,
  template: (tenantId: string, channel: Channel, name: string, version: number) =>
    `message_templates/${tenantId}/${channel}/${name}/${version}`,
};

/**
 * Compiles `schema` once. `onInvalid` hears of each bad read with what is wrong (at most five
 * problems, by JSON pointer); the error itself carries only the row.
 */
export function compileStoredShape<T>(schema: TSchema, onInvalid: (row: string, problems: string[]) => void): StoredShape<T> {
  const check = TypeCompiler.Compile(schema);
  return {
    read(row, value) {
      if (check.Check(value)) return value as T;
      const problems: string[] = [];
      for (const error of check.Errors(value)) {
        problems.push(`${error.path || '/'}: ${error.message}`);
        if (problems.length === 5) break;
      }
      onInvalid(row, problems);
      throw new SluiceError(
        'STORED_DATA_INVALID',
        `the stored row ${row} does not have the shape this build reads: fix it or save it again`,
        {
          details: { row },
        },
      );
    },
  };
}
