/**
 * The SMS kinds' receipt formats, read from the vendors' documented sample entries (Aliyun
 * SmsReport HTTP batch push; Tencent Cloud SMS status callback). The endpoint around them:
 * test/http/receipts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { aliyunSmsKind } from '../../src/providers/aliyun-sms.js';
import { chinaTime } from '../../src/providers/receipt.js';
import { tencentSmsKind } from '../../src/providers/tencent-sms.js';

const NOW = Date.UTC(2027, 0, 1);

describe('Aliyun SmsReport', () => {
  const format = aliyunSmsKind.receipts!;
  const sample = {
    phone_number: '1381111****',
    send_time: '2017-02-02 22:23:35',
    report_time: '2017-02-02 22:23:40',
    success: true,
    err_code: 'DELIVERED',
    err_msg: '用户接收成功',
    sms_size: '1',
    biz_id: '12345',
    out_id: '67890',
  };

  it('reads the id, the verdict, the code and the report time (China time)', () => {
    expect(format.read(sample, NOW)).toEqual({
      providerMessageId: '12345',
      delivered: true,
      code: 'DELIVERED',
      at: Date.parse('2017-02-02T14:23:40Z'),
    });
    expect(format.read({ ...sample, success: false, err_code: 'MK:0001', biz_id: 900619736562481 }, NOW)).toMatchObject({
      providerMessageId: '900619736562481',
      delivered: false,
      code: 'MK:0001',
    });
  });

  it('takes now for a missing time, and skips an entry without an id or a verdict', () => {
    expect(format.read({ biz_id: 'b', success: true }, NOW)).toEqual({ providerMessageId: 'b', delivered: true, code: '', at: NOW });
    expect(format.read({ ...sample, biz_id: undefined }, NOW)).toBeUndefined();
    expect(format.read({ ...sample, success: 'true' }, NOW)).toBeUndefined();
  });

  it('answers as Aliyun expects', () => {
    expect(format.answer).toEqual({ code: 0, msg: '接收成功' });
  });
});

describe('Tencent status callback', () => {
  const format = tencentSmsKind.receipts!;
  const sample = {
    user_receive_time: '2015-10-17 08:03:04',
    nationcode: '86',
    mobile: '13xxxxxxxxx',
    report_status: 'SUCCESS',
    errmsg: 'DELIVRD',
    description: '用户短信送达成功',
    sid: 'xxxxxxx',
  };

  it('reads the id, SUCCESS or FAIL, the code and the receive time (China time)', () => {
    expect(format.read(sample, NOW)).toEqual({
      providerMessageId: 'xxxxxxx',
      delivered: true,
      code: 'DELIVRD',
      at: Date.parse('2015-10-17T00:03:04Z'),
    });
    expect(format.read({ ...sample, report_status: 'FAIL', errmsg: 'UNDELIV' }, NOW)).toMatchObject({ delivered: false, code: 'UNDELIV' });
  });

  it('skips an entry without an id or with another status', () => {
    expect(format.read({ ...sample, sid: '' }, NOW)).toBeUndefined();
    expect(format.read({ ...sample, report_status: 'PENDING' }, NOW)).toBeUndefined();
  });

  it('answers as Tencent expects', () => {
    expect(format.answer).toEqual({ result: 0, errmsg: 'OK' });
  });
});

describe('chinaTime', () => {
  it('reads `YYYY-MM-DD HH:mm:ss` (or with a T) as UTC+8, anything else as the fallback', () => {
    expect(chinaTime('2026-12-01 00:30:00', NOW)).toBe(Date.parse('2026-11-30T16:30:00Z'));
    expect(chinaTime('2026-12-01T00:30:00', NOW)).toBe(Date.parse('2026-11-30T16:30:00Z'));
    for (const unreadable of [undefined, null, '', '2026-12-01', '2026-12-01 00:30:00Z', 'soon', 20261201])
      expect(chinaTime(unreadable, NOW)).toBe(NOW);
  });
});
