import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts Redis, the cluster, PostgreSQL and MariaDB (whatever is installed) unless the environment names servers.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration suites share servers; files run in parallel workers but each uses its own keys/databases.
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
