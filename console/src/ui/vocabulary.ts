/**
 * The API's lists the console offers as choices. Channels, algorithms, message statuses and event
 * types come from their one source (modules of constants, safe in the browser bundle); the
 * provider kinds' source builds the providers themselves, so they are listed here and checked
 * complete by the compiler (a kind added to the server and not here fails the console's type check).
 */
import type { ProviderView } from '../../../src/client/index.js';
import { CHANNELS } from '../../../src/core/channels.js';
import { ALGORITHMS } from '../../../src/limiter/types.js';
import { EVENT_TYPES, MESSAGE_STATUSES } from '../../../src/storage/schema.js';

export { ALGORITHMS, CHANNELS, EVENT_TYPES, MESSAGE_STATUSES };

type Kind = ProviderView['kind'];

export const PROVIDER_KINDS = [
  'console',
  'smtp',
  'aliyun-sms',
  'tencent-sms',
  'feishu',
  'slack',
  'http',
] as const satisfies readonly Kind[];
// Compile-time completeness: `true` only when no API kind is missing from the list above.
export const PROVIDER_KINDS_COMPLETE: [Exclude<Kind, (typeof PROVIDER_KINDS)[number]>] extends [never] ? true : false = true;
