/**
 * The provider kinds' names, in the table's order (`kinds.ts`, which the compiler holds to this
 * list). Imports nothing, so the console's browser bundle can take it without the vendors' clients.
 */
export const PROVIDER_KIND_NAMES = ['console', 'smtp', 'aliyun-sms', 'tencent-sms', 'feishu', 'slack', 'http'] as const;

/** A name `kinds.ts` has a row for. */
export type ProviderKindName = (typeof PROVIDER_KIND_NAMES)[number];
