/**
 * Feedback and the conversion rule on every SQL backend (the confirmation's status check is one
 * guarded UPDATE): the attack of issue 33, confirmed-then-canceled scheduled SMS, leaves no
 * conversion behind; feedback is only for messages handed to a provider, its tenant's, once.
 */
import { afterAll, beforeAll, it } from 'vitest';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';
import { canceledConfirmationsDoNotCount, feedbackIsIsolated, setPrices } from './fraud-scenarios.js';
import { startApp, type TestApp } from './support.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `feedback and the conversion rule on ${backend.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let t: TestApp;
    beforeAll(async () => {
      created = await backend.create();
      t = await startApp({ SLUICE_DB_URL: created.url });
      await setPrices(t);
    });
    afterAll(async () => {
      await t?.close();
      await created?.drop();
    });

    it(
      'confirmed-then-canceled scheduled SMS count no conversion: of 100 unconfirmed sends, minSends pass',
      () => canceledConfirmationsDoNotCount(t),
      60_000,
    );
    it('answers feedback 409 before the hand-off, 404 to another tenant; a repeat is idempotent', () => feedbackIsIsolated(t));
  });
}
