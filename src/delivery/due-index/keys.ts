/**
 * Every Redis key of the due index. All keys of one partition share the hash tag `{<partition>}`,
 * so the scripts, which touch the bucket set and several buckets at once, run in one cluster slot.
 *
 *   <prefix>due:{sms:0}:buckets          sorted set: bucket ids, each scored by its start (ms)
 *   <prefix>due:{sms:0}:b:<bucket start>  sorted set: message ids scored by due ms
 *   <prefix>due:{sms:0}:rebuilt           string: present once a rebuild completed on this Redis
 *
 * A bucket is named by its start, `floor(dueAt / bucketMs) * bucketMs` (epoch ms), and scored by
 * it too: claim walks buckets by start time, so its correctness never depends on `bucketMs` and
 * buckets written under an older width still drain. With the default 60 s buckets one set holds
 * about a minute of work, so no single key grows with the whole backlog.
 */
const PARTITION = /^[^{}\s]+$/;

export interface DueIndexKeys {
  /** The bucket set (KEYS[1] of every script). */
  buckets: string;
  /** Prefix of bucket keys; the scripts append the bucket id. */
  bucketPrefix: string;
  /** The rebuild marker: missing means the index is not known to be complete. */
  rebuilt: string;
}

export function dueIndexKeys(prefix: string, partition: string): DueIndexKeys {
  if (!PARTITION.test(partition)) throw new Error(`invalid due-index partition "${partition}"`);
  const base = `${prefix}due:{${partition}}`;
  return { buckets: `${base}:buckets`, bucketPrefix: `${base}:b:`, rebuilt: `${base}:rebuilt` };
}

/** The bucket of a due time: its start in epoch ms, as used in keys, bucket-set members and scores. */
export function bucketOf(dueAt: number, bucketMs: number): number {
  return Math.floor(dueAt / bucketMs) * bucketMs;
}
