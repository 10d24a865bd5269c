/** Helpers of the benchmarks that accept and send messages through a runtime (delivery, webhooks). */
import type { Runtime } from '../../src/main/runtime.js';

/** A positive integer from the environment variable `name`, else `fallback`. */
export function positiveEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  const value = raw ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work(0..count-1)` with at most `concurrency` in flight; rejects on the first failure. */
export async function pool(count: number, concurrency: number, work: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** How many of the tenant's messages are `sent`. */
export async function countSent(runtime: Runtime, tenantId: string): Promise<number> {
  const row = await runtime.database.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'sent')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
