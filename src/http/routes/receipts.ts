/**
 * Vendors' delivery receipts: `POST /v1/receipts/:providerId`, authenticated by the provider's
 * receipt token in `?token=` or `Sluice-Receipt-Token` (the vendors sign nothing), and the
 * admin call that issues the token. A push is answered in the vendor's format; an unreadable entry
 * is skipped, a receipt for no known message waits for its send: nothing in a push makes a 5xx.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/common.js';
import { errorResponses } from '../../api/errors.js';
import { SECURITY } from '../../api/operations.js';
import { ReceiptBody, ReceiptQuery, ReceiptToken, VendorAnswer } from '../../api/providers.js';
import { SluiceError } from '../../core/errors.js';
import { RECEIPT_FORMATS } from '../../providers/kinds.js';
import { adminSchema } from '../admin-schema.js';
import { requireAdmin } from '../auth.js';
import type { HttpDeps } from '../deps.js';
import { dependencyErrorHandler } from '../error-handler.js';

export const receiptRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tokenOf = (request: { query: unknown; headers: Record<string, unknown> }) => {
      const header = request.headers['sluice-receipt-token'];
      const query = (request.query as { token?: unknown } | undefined)?.token;
      return typeof query === 'string' ? query : typeof header === 'string' ? header : undefined;
    };
    app.post(
      '/v1/receipts/:id',
      {
        schema: {
          summary: `A vendor's delivery receipts (${RECEIPT_FORMATS.map(({ format }) => format.name).join(', ')}), answered in the vendor's format`,
          security: SECURITY.receipt,
          params: IdParam,
          querystring: ReceiptQuery,
          body: ReceiptBody,
          response: { 200: VendorAnswer, ...errorResponses(400, 401, 413, 415) },
        },
        // Before the body is read or checked: a caller without the token learns nothing else.
        onRequest: async (request) => deps.receipts.authenticate((request.params as { id: string }).id, tokenOf(request)),
      },
      async (request) => {
        return (await deps.receipts.receive(request.params.id, tokenOf(request), request.body)).body;
      },
    );
    await app.register(adminReceiptRoutes(deps));
  };

/** The admin half, its own plugin so the admin token guards it alone. */
const adminReceiptRoutes =
  (deps: HttpDeps): FastifyPluginAsyncTypebox =>
  async (admin) => {
    admin.addHook('onRequest', async (request) => requireAdmin(deps, request));
    admin.setErrorHandler(dependencyErrorHandler);
    admin.post(
      '/v1/admin/providers/:id/receipt-token',
      {
        schema: adminSchema(
          "A new receipt token for an SMS provider that pushes receipts (the previous one stops working); give the vendor's console the URL",
          { params: IdParam },
          { 200: ReceiptToken },
        ),
      },
      async (request) => {
        const issued = await deps.receipts.issueToken(request.params.id);
        if (!issued) throw new SluiceError('NOT_FOUND', 'no such provider');
        return issued;
      },
    );
  };
