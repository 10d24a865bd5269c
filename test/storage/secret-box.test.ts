import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/storage/secret-box.js';

const key = Buffer.alloc(32, 3);

describe('SecretBox', () => {
  it('seals and opens; equal secrets seal differently; the clear text is not in the ciphertext', () => {
    const box = new SecretBox(key);
    const a = box.seal('hunter2-secret', 'p1');
    const b = box.seal('hunter2-secret', 'p1');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\./);
    expect(a).not.toContain('hunter2');
    expect(box.open(a, 'p1')).toBe('hunter2-secret');
  });

  it('refuses a wrong key, a wrong context and a tampered value', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('s3cret', 'p1');
    expect(() => new SecretBox(Buffer.alloc(32, 4)).open(sealed, 'p1')).toThrow();
    expect(() => box.open(sealed, 'p2')).toThrow();
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1]! ^= 1;
    expect(() => box.open(`v1.${raw.toString('base64url')}`, 'p1')).toThrow();
    expect(() => box.open('v2.abc', 'p1')).toThrow(/format/);
  });

  it('accepts hex or base64 keys of 32 bytes only, and never prints the key', () => {
    expect(SecretBox.fromString(key.toString('hex')).open(new SecretBox(key).seal('x'))).toBe('x');
    expect(SecretBox.fromString(SecretBox.generateKey())).toBeInstanceOf(SecretBox);
    expect(() => SecretBox.fromString(Buffer.alloc(16).toString('base64'))).toThrow(/32-byte/);
    const box = SecretBox.fromString(key.toString('base64'));
    expect(inspect(box)).not.toContain(key.toString('hex'));
    expect(JSON.stringify({ box })).toBe('{"box":"SecretBox(***)"}');
  });
});
