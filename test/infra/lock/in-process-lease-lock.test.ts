import { describe, expect, it } from 'vitest';
import { createInProcessLockFactory, InProcessLeaseLock, InProcessLockRegistry } from '../../../src/infra/lock/in-process-lease-lock.js';

describe('InProcessLeaseLock', () => {
  it('one holder per name within a registry; release hands over', async () => {
    const registry = new InProcessLockRegistry();
    const a = new InProcessLeaseLock('dispatch:sms:0', registry);
    const b = new InProcessLeaseLock('dispatch:sms:0', registry);
    const other = new InProcessLeaseLock('dispatch:email:0', registry);
    expect(await a.tryAcquire()).toBe(true);
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await other.tryAcquire()).toBe(true);
    expect([a.isHeld(), b.isHeld(), other.isHeld()]).toEqual([true, false, true]);
    await b.release(); // not the holder: no effect
    expect(a.isHeld()).toBe(true);
    await a.release();
    expect(a.isHeld()).toBe(false);
    expect(await b.tryAcquire()).toBe(true);
  });

  it('registries are independent', async () => {
    const a = new InProcessLeaseLock('x', new InProcessLockRegistry());
    const b = new InProcessLeaseLock('x', new InProcessLockRegistry());
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(true);
  });

  it('revoke makes the holder lose: isHeld is false inside the listeners, and a throwing listener does not stop the rest', async () => {
    const registry = new InProcessLockRegistry();
    const a = new InProcessLeaseLock('x', registry);
    const seen: string[] = [];
    a.onLost(() => {
      throw new Error('listener bug');
    });
    a.onLost(() => seen.push(`held=${a.isHeld()}`));
    const unsubscribe = a.onLost(() => seen.push('removed listener'));
    unsubscribe();
    expect(registry.revoke('x')).toBe(false);
    await a.tryAcquire();
    expect(registry.revoke('x')).toBe(true);
    expect(seen).toEqual(['held=false']);
    expect(a.isHeld()).toBe(false);
    await a.release(); // releasing a lost lock is harmless
    const b = new InProcessLeaseLock('x', registry);
    expect(await b.tryAcquire()).toBe(true);
    expect(registry.holderOf('x')).toBe(b);
  });

  it('release does not fire onLost', async () => {
    const a = new InProcessLeaseLock('y', new InProcessLockRegistry());
    let lost = 0;
    a.onLost(() => {
      lost += 1;
    });
    await a.tryAcquire();
    await a.release();
    expect(lost).toBe(0);
  });

  it('the factory shares its registry between the locks it makes', async () => {
    const factory = createInProcessLockFactory(new InProcessLockRegistry());
    expect(await factory.createLock('z').tryAcquire()).toBe(true);
    expect(await factory.createLock('z').tryAcquire()).toBe(false);
  });
});
