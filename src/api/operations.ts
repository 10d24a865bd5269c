/**
 * The OpenAPI document's names: every operation's `operationId` (what generated clients call their
 * methods) and tags, keyed by `METHOD /path` as Fastify registers the route, and who may call each
 * (`security`). Kept in one table so the names stay stable and unique; test/http/openapi.test.ts
 * fails on a route missing here and on an entry no route has.
 */

/** Who may call a route, for the OpenAPI document (`security` of each operation). */
export const SECURITY = {
  tenant: [{ apiKey: [] }],
  admin: [{ adminToken: [] }],
  receipt: [{ receiptToken: [] }],
  none: [],
};

/** Tags, in the order /docs shows them. */
export const TAGS = [
  {
    name: 'messages',
    description: "Send, read and cancel messages (tenant API key); search a tenant's messages and read their timelines (admin token)",
  },
  { name: 'risk', description: 'Risk decisions on stored rule sets, and frequency checks on any subject (tenant API key)' },
  { name: 'tenants', description: 'Tenants, their API keys and quotas (admin token)' },
  { name: 'rules', description: "Tenant channels' frequency rules, recipients' bans and risk rule sets (admin token)" },
  { name: 'blacklists', description: "Tenants' and the global blacklists (admin token)" },
  { name: 'templates', description: 'Message templates and quiet hours per tenant channel (admin token)' },
  { name: 'providers', description: 'Delivery providers and their credentials (admin token)' },
  { name: 'webhooks', description: "Tenants' status callbacks and their events (admin token)" },
  { name: 'fraud', description: "SMS pumping protection: tenants' policies, the SMS prices, what it refused (admin token)" },
  {
    name: 'suppressions',
    description: "Recipients' opt-outs, suppressions and consent records (tenant API key; any tenant's with the admin token)",
  },
  { name: 'receipts', description: "Vendors' delivery receipts (a provider's receipt token)" },
  { name: 'operations', description: 'Liveness, readiness and metrics (no credentials)' },
] as const;

export type Tag = (typeof TAGS)[number]['name'];

/** `METHOD /path` → its operation's id and tag. */
export const OPERATIONS: Record<string, { operationId: string; tag: Tag }> = {
  'GET /healthz': { operationId: 'getLiveness', tag: 'operations' },
  'GET /readyz': { operationId: 'getReadiness', tag: 'operations' },
  'GET /metrics': { operationId: 'getMetrics', tag: 'operations' },
  'POST /v1/messages': { operationId: 'sendMessage', tag: 'messages' },
  'POST /v1/messages/batch': { operationId: 'sendMessages', tag: 'messages' },
  'GET /v1/messages': { operationId: 'listMessages', tag: 'messages' },
  'GET /v1/messages/:id': { operationId: 'getMessage', tag: 'messages' },
  'DELETE /v1/messages/:id': { operationId: 'cancelMessage', tag: 'messages' },
  'POST /v1/messages/:id/feedback': { operationId: 'sendMessageFeedback', tag: 'messages' },
  'POST /v1/frequency/check': { operationId: 'checkFrequency', tag: 'risk' },
  'POST /v1/risk/check': { operationId: 'checkRisk', tag: 'risk' },
  'POST /v1/risk/events': { operationId: 'recordRiskEvent', tag: 'risk' },
  'POST /v1/admin/tenants': { operationId: 'createTenant', tag: 'tenants' },
  'GET /v1/admin/tenants': { operationId: 'listTenants', tag: 'tenants' },
  'GET /v1/admin/tenants/:id': { operationId: 'getTenant', tag: 'tenants' },
  'PATCH /v1/admin/tenants/:id': { operationId: 'updateTenant', tag: 'tenants' },
  'GET /v1/admin/tenants/:id/backlog': { operationId: 'getTenantBacklog', tag: 'tenants' },
  'GET /v1/admin/tenants/:id/keys': { operationId: 'listApiKeys', tag: 'tenants' },
  'POST /v1/admin/tenants/:id/keys': { operationId: 'issueApiKey', tag: 'tenants' },
  'DELETE /v1/admin/tenants/:id/keys/:keyId': { operationId: 'revokeApiKey', tag: 'tenants' },
  'PUT /v1/admin/tenants/:id/rules/:channel': { operationId: 'setRules', tag: 'rules' },
  'GET /v1/admin/tenants/:id/rules/:channel': { operationId: 'getRules', tag: 'rules' },
  'DELETE /v1/admin/tenants/:id/bans/:channel/:to': { operationId: 'liftBan', tag: 'rules' },
  'GET /v1/admin/tenants/:id/bans/:channel/:to': { operationId: 'getBanStatus', tag: 'rules' },
  'POST /v1/admin/tenants/:id/rules/:channel/preview': { operationId: 'previewRules', tag: 'rules' },
  'GET /v1/admin/tenants/:id/messages': { operationId: 'searchMessages', tag: 'messages' },
  'GET /v1/admin/tenants/:id/messages/:messageId': { operationId: 'getAdminMessage', tag: 'messages' },
  'PUT /v1/admin/tenants/:id/risk/:action': { operationId: 'setRiskRuleSet', tag: 'rules' },
  'GET /v1/admin/tenants/:id/risk/:action': { operationId: 'getRiskRuleSet', tag: 'rules' },
  'POST /v1/admin/tenants/:id/blacklist': { operationId: 'addToTenantBlacklist', tag: 'blacklists' },
  'DELETE /v1/admin/tenants/:id/blacklist': { operationId: 'removeFromTenantBlacklist', tag: 'blacklists' },
  'GET /v1/admin/tenants/:id/blacklist': { operationId: 'listTenantBlacklist', tag: 'blacklists' },
  'POST /v1/admin/blacklist': { operationId: 'addToGlobalBlacklist', tag: 'blacklists' },
  'DELETE /v1/admin/blacklist': { operationId: 'removeFromGlobalBlacklist', tag: 'blacklists' },
  'GET /v1/admin/blacklist': { operationId: 'listGlobalBlacklist', tag: 'blacklists' },
  'PUT /v1/admin/tenants/:id/templates/:channel/:name': { operationId: 'putTemplate', tag: 'templates' },
  'GET /v1/admin/tenants/:id/templates/:channel/:name': { operationId: 'getTemplateVersions', tag: 'templates' },
  'DELETE /v1/admin/tenants/:id/templates/:channel/:name': { operationId: 'retireTemplate', tag: 'templates' },
  'GET /v1/admin/tenants/:id/templates': { operationId: 'listTemplates', tag: 'templates' },
  'PUT /v1/admin/tenants/:id/quiet-hours/:channel': { operationId: 'setQuietHours', tag: 'templates' },
  'GET /v1/admin/tenants/:id/quiet-hours/:channel': { operationId: 'getQuietHours', tag: 'templates' },
  'DELETE /v1/admin/tenants/:id/quiet-hours/:channel': { operationId: 'removeQuietHours', tag: 'templates' },
  'POST /v1/admin/providers': { operationId: 'createProvider', tag: 'providers' },
  'GET /v1/admin/providers': { operationId: 'listProviders', tag: 'providers' },
  'PATCH /v1/admin/providers/:id': { operationId: 'updateProvider', tag: 'providers' },
  'DELETE /v1/admin/providers/:id': { operationId: 'deleteProvider', tag: 'providers' },
  'POST /v1/admin/providers/:id/receipt-token': { operationId: 'issueReceiptToken', tag: 'providers' },
  'POST /v1/admin/tenants/:id/webhooks': { operationId: 'createWebhook', tag: 'webhooks' },
  'GET /v1/admin/tenants/:id/webhooks': { operationId: 'listWebhooks', tag: 'webhooks' },
  'GET /v1/admin/tenants/:id/webhooks/:webhookId': { operationId: 'getWebhook', tag: 'webhooks' },
  'PATCH /v1/admin/tenants/:id/webhooks/:webhookId': { operationId: 'updateWebhook', tag: 'webhooks' },
  'DELETE /v1/admin/tenants/:id/webhooks/:webhookId': { operationId: 'deleteWebhook', tag: 'webhooks' },
  'POST /v1/admin/tenants/:id/webhooks/:webhookId/rotate-secret': { operationId: 'rotateWebhookSecret', tag: 'webhooks' },
  'GET /v1/admin/tenants/:id/webhooks/:webhookId/events': { operationId: 'listWebhookEvents', tag: 'webhooks' },
  'POST /v1/admin/tenants/:id/webhooks/:webhookId/events/:eventId/replay': { operationId: 'replayWebhookEvent', tag: 'webhooks' },
  'PUT /v1/admin/tenants/:id/fraud/sms': { operationId: 'setFraudPolicy', tag: 'fraud' },
  'GET /v1/admin/tenants/:id/fraud/sms': { operationId: 'getFraudPolicy', tag: 'fraud' },
  'GET /v1/admin/tenants/:id/fraud/sms/status': { operationId: 'getFraudStatus', tag: 'fraud' },
  'PUT /v1/admin/prices/sms': { operationId: 'setSmsPrices', tag: 'fraud' },
  'GET /v1/admin/prices/sms': { operationId: 'getSmsPrices', tag: 'fraud' },
  'POST /v1/receipts/:id': { operationId: 'receiveReceipts', tag: 'receipts' },
  'GET /v1/suppressions/:channel/:recipient': { operationId: 'getSuppression', tag: 'suppressions' },
  'PUT /v1/suppressions/:channel/:recipient': { operationId: 'suppressRecipient', tag: 'suppressions' },
  'DELETE /v1/suppressions/:channel/:recipient': { operationId: 'unsuppressRecipient', tag: 'suppressions' },
  'GET /v1/suppressions': { operationId: 'listSuppressions', tag: 'suppressions' },
  'GET /v1/recipients/:channel/:recipient/consent': { operationId: 'getConsentHistory', tag: 'suppressions' },
  'GET /v1/admin/tenants/:id/suppressions/:channel/:recipient': { operationId: 'getTenantSuppression', tag: 'suppressions' },
  'PUT /v1/admin/tenants/:id/suppressions/:channel/:recipient': { operationId: 'suppressTenantRecipient', tag: 'suppressions' },
  'DELETE /v1/admin/tenants/:id/suppressions/:channel/:recipient': { operationId: 'unsuppressTenantRecipient', tag: 'suppressions' },
  'GET /v1/admin/tenants/:id/suppressions': { operationId: 'listTenantSuppressions', tag: 'suppressions' },
  'GET /v1/admin/tenants/:id/recipients/:channel/:recipient/consent': { operationId: 'getTenantConsentHistory', tag: 'suppressions' },
};
