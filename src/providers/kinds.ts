/**
 * The provider kinds sluice can build, one row each: `PROVIDER_KINDS`, the stored `kind` type,
 * the admin API's enum, the registry and the kinds that take receipts all come from this table.
 * Adding a vendor: its module (client, descriptor, receipt format), its name in `kind-names.ts`
 * (the browser-safe list the console reads), its row here, its row in docs/operations.md's
 * provider table.
 */
import { aliyunSmsKind } from './aliyun-sms.js';
import { consoleKind } from './console.js';
import { feishuKind } from './feishu.js';
import { httpWebhookKind } from './http-webhook.js';
import { PROVIDER_KIND_NAMES, type ProviderKindName } from './kind-names.js';
import type { ProviderKindDescriptor } from './provider-kind.js';
import type { ReceiptFormat } from './receipt.js';
import { slackKind } from './slack.js';
import { smtpKind } from './smtp.js';
import { tencentSmsKind } from './tencent-sms.js';

/**
 * One row per name of `kind-names.ts`, each the descriptor of that name: a name without a row, a
 * row without a name and a row under another kind's name are compile errors.
 */
const TABLE: { readonly [K in ProviderKindName]: ProviderKindDescriptor<K> } = {
  console: consoleKind,
  smtp: smtpKind,
  'aliyun-sms': aliyunSmsKind,
  'tencent-sms': tencentSmsKind,
  feishu: feishuKind,
  slack: slackKind,
  http: httpWebhookKind,
};

/** The vendors sluice speaks to. `console` is the embedded demo: it prints instead of sending. */
export type ProviderKind = ProviderKindName;

/** Every kind's name, in `kind-names.ts`'s order. */
export const PROVIDER_KINDS: readonly ProviderKind[] = PROVIDER_KIND_NAMES;

export const isProviderKind = (kind: unknown): kind is ProviderKind => (PROVIDER_KINDS as readonly unknown[]).includes(kind);

const BY_KIND = new Map<string, ProviderKindDescriptor>(PROVIDER_KINDS.map((kind) => [kind, TABLE[kind]]));

/** The descriptor of a kind; undefined for a name no row has (a row stored by another build). */
export const providerKind = (kind: string): ProviderKindDescriptor | undefined => BY_KIND.get(kind);

/** The kinds whose vendors push delivery receipts (their descriptors have a `receipts` format), in the table's order. */
export const RECEIPT_FORMATS: readonly { readonly kind: ProviderKind; readonly format: ReceiptFormat }[] = PROVIDER_KINDS.flatMap(
  (kind) => {
    const format = TABLE[kind].receipts;
    return format === undefined ? [] : [{ kind, format }];
  },
);

/** The names of {@link RECEIPT_FORMATS}' kinds. */
export const RECEIPT_KINDS: readonly ProviderKind[] = RECEIPT_FORMATS.map(({ kind }) => kind);
