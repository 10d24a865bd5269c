/** What the kinds' table derives from the descriptors. */
import { describe, expect, it } from 'vitest';
import { RECEIPT_FORMATS, RECEIPT_KINDS } from '../../src/providers/kinds.js';

describe('the kinds that take receipts', () => {
  it('are the SMS kinds whose descriptors read their vendors’ pushes, in the table’s order', () => {
    expect(RECEIPT_KINDS).toEqual(['aliyun-sms', 'tencent-sms']);
    expect(RECEIPT_FORMATS.map(({ format }) => format.name)).toEqual(['Aliyun SmsReport', 'Tencent status callback']);
  });
});
