/**
 * The API's lists the console offers as choices. Channels and algorithms come from their one
 * source; the kinds and event types are the API's types, listed here and checked complete by the
 * compiler (a kind added to the server without being added here fails the console's type check).
 */
import type { MessageView, ProviderView, WebhookView } from '../../../src/client/index.js';
import { CHANNELS } from '../../../src/core/channels.js';
import { ALGORITHMS } from '../../../src/limiter/types.js';

export { ALGORITHMS, CHANNELS };

type Kind = ProviderView['kind'];
type EventType = WebhookView['events'][number];
type MessageStatus = MessageView['status'];

export const PROVIDER_KINDS = [
  'console',
  'smtp',
  'aliyun-sms',
  'tencent-sms',
  'feishu',
  'slack',
  'http',
] as const satisfies readonly Kind[];
export const EVENT_TYPES = [
  'message.accepted',
  'message.sent',
  'message.failed',
  'message.canceled',
  'message.delivered',
  'message.undelivered',
] as const satisfies readonly EventType[];

export const MESSAGE_STATUSES = [
  'queued',
  'scheduled',
  'sending',
  'sent',
  'failed',
  'canceled',
  'delivered',
  'undelivered',
] as const satisfies readonly MessageStatus[];

// Compile-time completeness: `true` only when no API value is missing from the lists above.
const kindsComplete: [Exclude<Kind, (typeof PROVIDER_KINDS)[number]>] extends [never] ? true : false = true;
const eventsComplete: [Exclude<EventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : false = true;
const statusesComplete: [Exclude<MessageStatus, (typeof MESSAGE_STATUSES)[number]>] extends [never] ? true : false = true;
export const LISTS_COMPLETE = kindsComplete && eventsComplete && statusesComplete;
