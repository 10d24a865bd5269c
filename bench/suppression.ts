/**
 * What the suppression check costs on the accept path (issue 36): in one process on the embedded
 * backend (SQLite), with 100,000 suppressions of the tenant stored, the CPU per accepted send
 * (`services.messages.send`, 100 at a time, every step of the chain) and the CPU per suppression
 * lookup alone (`SqlSuppressionDirectory.suppression`, the step's one primary-key query, for
 * recipients not suppressed, as nearly every send's), in alternating rounds so the machine's other
 * load falls on both alike. The step's share = lookup CPU / send CPU. Target: ≤ 3 %.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../src/main/runtime.js';
import { suppressionDirectory } from '../src/main/wiring/admission.js';
import { loadSettings } from '../src/settings/settings.js';
import type { Benchmark } from './support/benchmark.js';
import { markdownTable } from './support/table.js';

const STORED = 100_000;
const ROUNDS = 3;

const cpu = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

export const benchmark: Benchmark = {
  name: 'suppression',
  title: 'Suppression check: its share of the accept path',
  async run(context) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-suppression-'));
    const runtime = await createRuntime(
      loadSettings(
        { SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`, SLUICE_SECRET_KEY_FILE: join(dir, 'key'), SLUICE_LOG_LEVEL: 'silent' },
        undefined,
      ),
    );
    try {
      const tenant = await runtime.services.tenants.createTenant('bench-suppression');
      await runtime.services.rules.setRules(tenant.id, 'sms', [{ windowSeconds: 60, limit: 1000, banSeconds: 0 }]);
      const rows = Array.from({ length: STORED }, (_, n) => ({
        tenant_id: tenant.id,
        channel: 'sms' as const,
        recipient: `+86139${String(n).padStart(8, '0')}`,
        category: '*',
        source: 'api' as const,
        reason: null,
        created_at: 1,
      }));
      for (let start = 0; start < rows.length; start += 500)
        await runtime.database.db
          .insertInto('suppressions')
          .values(rows.slice(start, start + 500))
          .execute();
      const lookup = suppressionDirectory(runtime.settings, runtime, runtime.metrics);
      let n = 0;
      const phone = () => `+86138${String(n++ % 10_000_000).padStart(8, '0')}`;
      const sendRound = async () => {
        const until = Date.now() + context.seconds * 500;
        const start = cpu();
        let sends = 0;
        while (Date.now() < until) {
          await Promise.all(
            Array.from({ length: 100 }, () =>
              runtime.services.messages.send(tenant.apiKey, { channel: 'sms', to: phone(), body: 'code 1234' }),
            ),
          );
          sends += 100;
        }
        return (cpu() - start) / sends;
      };
      const lookupRound = async () => {
        const until = Date.now() + context.seconds * 500;
        const start = cpu();
        let lookups = 0;
        while (Date.now() < until) {
          await Promise.all(Array.from({ length: 100 }, () => lookup.suppression(tenant.id, 'sms', phone(), undefined)));
          lookups += 100;
        }
        return (cpu() - start) / lookups;
      };
      await sendRound(); // warm-up
      const results: string[][] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const send = await sendRound();
        const check = await lookupRound();
        context.progress(`round ${round}: ${send.toFixed(0)} µs per send, ${check.toFixed(1)} µs per lookup`);
        results.push([String(round), send.toFixed(0), check.toFixed(1), `${((check / send) * 100).toFixed(1)} %`]);
      }
      const headers = ['round', 'CPU µs per accepted send', 'CPU µs per suppression lookup', "the check's share"];
      return markdownTable(
        headers.map((header, index) => ({ header, align: index === 0 ? ('left' as const) : ('right' as const) })),
        results,
      );
    } finally {
      await runtime.close();
    }
  },
};
