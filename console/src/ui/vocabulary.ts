/**
 * The API's lists the console offers as choices, each from its one source: modules of constants
 * that import nothing of Node, safe in the browser bundle (the provider kinds' names come from
 * `kind-names.ts`, which the kinds' table is held to, not from the table, which builds clients).
 */
import { CHANNELS } from '../../../src/core/channels.js';
import { EVENT_TYPES, MESSAGE_STATUSES } from '../../../src/core/lifecycle.js';
import { ALGORITHMS } from '../../../src/limiter/types.js';
import { PROVIDER_KIND_NAMES as PROVIDER_KINDS } from '../../../src/providers/kind-names.js';

export { ALGORITHMS, CHANNELS, EVENT_TYPES, MESSAGE_STATUSES, PROVIDER_KINDS };
