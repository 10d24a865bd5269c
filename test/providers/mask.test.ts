import { describe, expect, it } from 'vitest';
import { maskRecipient, scrubRecipient } from '../../src/providers/mask.js';

describe('maskRecipient', () => {
  it.each([
    ['+8613812340000', '+86138****0000'],
    ['+14155550123', '+1415****0123'],
    ['+442071838750', '+44207****8750'],
    ['13812340000', '138****0000'],
    ['alice@example.com', 'a***@example.com'],
    ['https://open.feishu.cn/open-apis/bot/v2/hook/secret-token', 'https://open.feishu.cn/…'],
    ['ops-alerts', 'ops-alerts'],
  ])('%s → %s', (input, masked) => {
    expect(maskRecipient(input)).toBe(masked);
  });

  it('never returns the whole number or address', () => {
    for (const recipient of ['+8613812340000', '+12025550199', 'bob.smith@example.org']) {
      expect(maskRecipient(recipient)).not.toContain(recipient.replace(/^\+/, ''));
    }
  });
});

describe('scrubRecipient', () => {
  it('replaces the recipient, with or without +, in vendor text', () => {
    expect(scrubRecipient('bad number 8613812340000 (+8613812340000)', '+8613812340000')).toBe(
      'bad number +86138****0000 (+86138****0000)',
    );
  });
});
