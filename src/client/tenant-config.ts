/**
 * The admin calls on a tenant's configuration beyond `client.admin`: key revocation, risk rule
 * sets, SMS pumping protection, templates, quiet hours and webhooks (`client.tenantConfig`). Same transport, same errors
 * as values, same retries as every other call of `SluiceClient`.
 */
import type { Static } from '@sinclair/typebox';
import type { FraudPolicyBody, FraudPolicyView, FraudStatusView } from '../api/fraud.js';
import type { RiskRuleSetBody, RiskRuleSetView } from '../api/risk.js';
import type {
  QuietHoursBody,
  QuietHoursRemoved,
  QuietHoursView,
  Retired,
  TemplateBody,
  TemplateList,
  TemplateVersions,
  TemplateVersionView,
} from '../api/templates.js';
import type { ApiKeyRevoked } from '../api/tenants.js';
import type {
  NewWebhookBody,
  WebhookDeleted,
  WebhookEventList,
  WebhookEventView,
  WebhookList,
  WebhookPatchBody,
  WebhookView,
  WebhookWithSecret,
} from '../api/webhooks.js';
import type { Call, Result } from './call.js';

export type TemplateVersion = Static<typeof TemplateVersionView>;
export type TemplateInput = Static<typeof TemplateBody>;
export type QuietHours = Static<typeof QuietHoursView>;
export type QuietHoursInput = Static<typeof QuietHoursBody>;
export type RiskRuleSetInput = Static<typeof RiskRuleSetBody>;
export type FraudPolicyInput = Static<typeof FraudPolicyBody>;
export type { FraudPolicyView, FraudStatusView, RiskRuleSetView, WebhookEventView, WebhookView, WebhookWithSecret };

/** What the group needs of the client: one call through its transport. */
export type Caller = <T>(call: Call) => Promise<Result<T>>;

const e = encodeURIComponent;

/** `client.tenantConfig`: see {@link SluiceClient}. */
export function tenantConfigCalls(call: Caller) {
  const tenant = (id: string) => `/v1/admin/tenants/${e(id)}`;
  const webhook = (id: string, webhookId: string) => `${tenant(id)}/webhooks/${e(webhookId)}`;
  return {
    /** `DELETE …/keys/:keyId`: revokes one key at once, everywhere. */
    revokeApiKey: (id: string, keyId: string): Promise<Result<Static<typeof ApiKeyRevoked>>> =>
      call({ method: 'DELETE', path: `${tenant(id)}/keys/${e(keyId)}`, auth: 'admin', repeatable: true }),
    getRiskRuleSet: (id: string, action: string): Promise<Result<RiskRuleSetView>> =>
      call({ method: 'GET', path: `${tenant(id)}/risk/${e(action)}`, auth: 'admin', repeatable: true }),
    /** A rule set the service refuses answers 400 INVALID_REQUEST naming the rule and field. */
    setRiskRuleSet: (id: string, action: string, body: RiskRuleSetInput): Promise<Result<RiskRuleSetView>> =>
      call({ method: 'PUT', path: `${tenant(id)}/risk/${e(action)}`, body, auth: 'admin', repeatable: true }),
    /** The tenant's SMS pumping protection policy (docs/fraud.md); 404 without one. */
    getFraudPolicy: (id: string): Promise<Result<FraudPolicyView>> =>
      call({ method: 'GET', path: `${tenant(id)}/fraud/sms`, auth: 'admin', repeatable: true }),
    /** Replaces it (`mode` defaults to monitor); an oversize or unknown list is a 400 value naming the field. */
    setFraudPolicy: (id: string, body: FraudPolicyInput): Promise<Result<FraudPolicyView>> =>
      call({ method: 'PUT', path: `${tenant(id)}/fraud/sms`, body, auth: 'admin', repeatable: true }),
    /** The month's estimated spend against the cap, today's refusals and would-be refusals by rule. */
    getFraudStatus: (id: string): Promise<Result<FraudStatusView>> =>
      call({ method: 'GET', path: `${tenant(id)}/fraud/sms/status`, auth: 'admin', repeatable: true }),
    listTemplates: (id: string, filter: { channel?: string } = {}): Promise<Result<Static<typeof TemplateList>>> =>
      call({ method: 'GET', path: `${tenant(id)}/templates`, query: filter, auth: 'admin', repeatable: true }),
    getTemplateVersions: (id: string, channel: string, name: string): Promise<Result<Static<typeof TemplateVersions>>> =>
      call({ method: 'GET', path: `${tenant(id)}/templates/${e(channel)}/${e(name)}`, auth: 'admin', repeatable: true }),
    /** Each put stores the next version. */
    putTemplate: (id: string, channel: string, name: string, body: TemplateInput): Promise<Result<TemplateVersion>> =>
      call({ method: 'PUT', path: `${tenant(id)}/templates/${e(channel)}/${e(name)}`, body, auth: 'admin', repeatable: false }),
    retireTemplate: (id: string, channel: string, name: string): Promise<Result<Static<typeof Retired>>> =>
      call({ method: 'DELETE', path: `${tenant(id)}/templates/${e(channel)}/${e(name)}`, auth: 'admin', repeatable: true }),
    getQuietHours: (id: string, channel: string): Promise<Result<QuietHours>> =>
      call({ method: 'GET', path: `${tenant(id)}/quiet-hours/${e(channel)}`, auth: 'admin', repeatable: true }),
    setQuietHours: (id: string, channel: string, body: QuietHoursInput): Promise<Result<QuietHours>> =>
      call({ method: 'PUT', path: `${tenant(id)}/quiet-hours/${e(channel)}`, body, auth: 'admin', repeatable: true }),
    removeQuietHours: (id: string, channel: string): Promise<Result<Static<typeof QuietHoursRemoved>>> =>
      call({ method: 'DELETE', path: `${tenant(id)}/quiet-hours/${e(channel)}`, auth: 'admin', repeatable: true }),
    /** The signing secret is in this answer only. */
    createWebhook: (id: string, body: Static<typeof NewWebhookBody>): Promise<Result<WebhookWithSecret>> =>
      call({ method: 'POST', path: `${tenant(id)}/webhooks`, body, auth: 'admin', repeatable: false }),
    listWebhooks: (id: string): Promise<Result<Static<typeof WebhookList>>> =>
      call({ method: 'GET', path: `${tenant(id)}/webhooks`, auth: 'admin', repeatable: true }),
    getWebhook: (id: string, webhookId: string): Promise<Result<WebhookView>> =>
      call({ method: 'GET', path: webhook(id, webhookId), auth: 'admin', repeatable: true }),
    updateWebhook: (id: string, webhookId: string, patch: Static<typeof WebhookPatchBody>): Promise<Result<WebhookView>> =>
      call({ method: 'PATCH', path: webhook(id, webhookId), body: patch, auth: 'admin', repeatable: true }),
    deleteWebhook: (id: string, webhookId: string): Promise<Result<Static<typeof WebhookDeleted>>> =>
      call({ method: 'DELETE', path: webhook(id, webhookId), auth: 'admin', repeatable: true }),
    /** A new secret, in this answer only; the old one keeps signing for the grace period. */
    rotateWebhookSecret: (id: string, webhookId: string): Promise<Result<WebhookWithSecret>> =>
      call({ method: 'POST', path: `${webhook(id, webhookId)}/rotate-secret`, auth: 'admin', repeatable: false }),
    /** Default status `failed`. */
    listWebhookEvents: (
      id: string,
      webhookId: string,
      filter: { status?: string; limit?: number } = {},
    ): Promise<Result<Static<typeof WebhookEventList>>> =>
      call({ method: 'GET', path: `${webhook(id, webhookId)}/events`, query: filter, auth: 'admin', repeatable: true }),
    replayWebhookEvent: (id: string, webhookId: string, eventId: string): Promise<Result<WebhookEventView>> =>
      call({ method: 'POST', path: `${webhook(id, webhookId)}/events/${e(eventId)}/replay`, auth: 'admin', repeatable: true }),
  };
}
