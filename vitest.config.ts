import { defineConfig } from 'vitest/config';

/**
 * Drills whose assertions lean on timing (latency under a fault, fair shares, processes killed
 * mid-stream, races between processes): they run one at a time, after the rest, so no other file
 * competes with them for the CPU.
 */
const DRILLS = [
  'test/faults/**/*.test.ts',
  'test/delivery/kill.int.test.ts',
  'test/delivery/broker-kill.int.test.ts',
  'test/delivery/fairness.int.test.ts',
  'test/delivery/broker-cluster.int.test.ts',
  // Real-clock bounds (a burst's refill, a stall after an election) that a busy core stretches.
  'test/limiter/lease/*.int.test.ts',
  'test/**/*race.int.test.ts',
];

export default defineConfig({
  test: {
    // Starts Redis, the cluster, PostgreSQL and MariaDB (whatever is installed) unless the environment names servers.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      {
        extends: true,
        // Files share the servers but each uses its own keys and databases, and most of their time
        // is spent waiting (on servers, child processes, timers): three at once, even on 2 cores
        // (Vitest's default there is one).
        test: { name: 'files', include: ['test/**/*.test.ts'], exclude: DRILLS, maxWorkers: 3 },
      },
      // maxWorkers 1: Vitest runs this project's files one by one, after the other project's. (Each
      // project lists its own files: `include` would add to a shared one, not replace it.)
      { extends: true, test: { name: 'drills', include: DRILLS, maxWorkers: 1 } },
    ],
  },
});
