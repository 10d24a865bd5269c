/**
 * CPU per decision of MemoryStore against RateLimiterMemory with large limits (every decision
 * admits), sequentially, 10,000 subjects at random: the quick check behind the benchmark's
 * in-memory rows, for profiling (`node --cpu-prof --import tsx bench/support/memory-store-cpu.ts`).
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Limiter, MemoryStore, type Rule } from '../../src/limiter/index.js';

const SUBJECTS = 10_000;
const subjects = Array.from({ length: SUBJECTS }, (_, index) => `bench:sms:+86138${String(index).padStart(8, '0')}`);
const LARGE: Rule[] = [
  { windowMs: 60_000, limit: 1_000_000, banMs: 600_000 },
  { windowMs: 3_600_000, limit: 1_000_000 },
  { windowMs: 86_400_000, limit: 1_000_000 },
];
const randomSubject = (): string => subjects[Math.floor(Math.random() * SUBJECTS)]!;

async function measure(name: string, attempt: () => Promise<unknown>, ms: number): Promise<void> {
  const warm = Date.now() + 1_500;
  while (Date.now() < warm) for (let index = 0; index < 1_000; index++) await attempt();
  const before = process.cpuUsage();
  const end = Date.now() + ms;
  let decisions = 0;
  while (Date.now() < end) {
    for (let index = 0; index < 1_000; index++) await attempt();
    decisions += 1_000;
  }
  const cpu = process.cpuUsage(before);
  console.log(`${name}: ${((cpu.user + cpu.system) / decisions).toFixed(2)} µs CPU per decision`);
}

for (const ids of [false, true]) {
  const limiter = new Limiter({ store: new MemoryStore() });
  let sequence = 0;
  await measure(
    `sluice MemoryStore, large${ids ? ', request ids' : ''}`,
    () => limiter.check({ subject: randomSubject(), rules: LARGE, requestId: ids ? `msg-${++sequence}` : undefined }),
    3_000,
  );
}
const peer = new RateLimiterMemory({ points: 1_000_000, duration: 60 });
await measure('RateLimiterMemory, large', () => peer.consume(randomSubject()), 3_000);
