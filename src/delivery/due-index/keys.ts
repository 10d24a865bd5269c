/**
 * Every Redis key of the due index. All keys of one partition share the hash tag `{<partition>}`,
 * so the scripts, which touch the ready set and several queues at once, run in one cluster slot.
 *
 *   <prefix>dq:{sms:0}:ready              sorted set: the partition's queues, each scored by its earliest entry
 *   <prefix>dq:{sms:0}:q:<lane>|<tenant>  sorted set: one tenant lane's message ids scored by due ms
 *   <prefix>dq:{sms:0}:rebuilt            string: present once a rebuild completed on this Redis
 *
 * A queue per tenant and lane (0 transactional, 1 bulk) is what lets a claim share the slots among
 * tenants (`claim.lua`) instead of taking the earliest entries whoever they belong to. (Builds
 * before the fair claim kept `<prefix>due:{…}` buckets; they are no longer read, and a rebuild from
 * SQL fills the new keys on the first start.)
 */
const PARTITION = /^[^{}\s]+$/;

export interface DueIndexKeys {
  /** The ready set (KEYS[1] of every script). */
  ready: string;
  /** Prefix of queue keys; the scripts append the queue's name. */
  queuePrefix: string;
  /** The rebuild marker: missing means the index is not known to be complete. */
  rebuilt: string;
}

export function dueIndexKeys(prefix: string, partition: string): DueIndexKeys {
  if (!PARTITION.test(partition)) throw new Error(`invalid due-index partition "${partition}"`);
  const base = `${prefix}dq:{${partition}}`;
  return { ready: `${base}:ready`, queuePrefix: `${base}:q:`, rebuilt: `${base}:rebuilt` };
}

/** A queue's name: its lane (0 transactional, 1 bulk) and tenant. */
export const queueOf = (entry: { tenantId: string; priority?: 'transactional' | 'bulk' }) =>
  `${entry.priority === 'bulk' ? 1 : 0}|${entry.tenantId}`;
