/**
 * The kinds' table and the browser-safe list of their names (`kind-names.ts`, which the console
 * bundles: test/console/imports.test.ts) are one list: the compiler holds the table to the names,
 * and this holds it at run time.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDER_KIND_NAMES } from '../../src/providers/kind-names.js';
import { PROVIDER_KINDS, providerKind, RECEIPT_FORMATS, RECEIPT_KINDS } from '../../src/providers/kinds.js';

describe('the kind names', () => {
  it("are the table's kinds, in its order, each name's row the descriptor of that kind", () => {
    expect([...PROVIDER_KINDS]).toEqual([...PROVIDER_KIND_NAMES]);
    expect(PROVIDER_KIND_NAMES.map((name) => providerKind(name)?.kind)).toEqual([...PROVIDER_KIND_NAMES]);
  });
});

describe('the kinds that take receipts', () => {
  it('are the SMS kinds whose descriptors read their vendors’ pushes, in the table’s order', () => {
    expect(RECEIPT_KINDS).toEqual(['aliyun-sms', 'tencent-sms']);
    expect(RECEIPT_FORMATS.map(({ format }) => format.name)).toEqual(['Aliyun SmsReport', 'Tencent status callback']);
  });
});
