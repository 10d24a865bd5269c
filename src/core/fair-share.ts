/**
 * How a dispatcher's send slots are shared among tenants (docs/operations.md, "Fair delivery").
 * Every claim hands out slots in this order:
 *
 * 1. **Shares.** Each active tenant (due messages, or sends in flight) is entitled to
 *    `max(1, floor(concurrency · weight / Σ weights))` slots. A tenant below its share may claim up
 *    to it even when every slot is taken by tenants above theirs: a slow endpoint, a silent DNS or
 *    a paced backlog of one tenant holds only that tenant's share, and the newcomer does not wait
 *    for it. The slots in flight are therefore bounded by `2 · concurrency`, not `concurrency`.
 *    (What a tenant is owed is handed out once it reaches `minFree` or its whole share, so a busy
 *    tenant's claims stay batched.)
 * 2. **Work conservation.** Free slots beyond the shares go to whoever has due messages: a tenant
 *    alone uses every slot.
 *
 * Within each step the transactional lane goes before the bulk lane, and within a lane the
 * tenants are served by weighted round-robin (each round gives a tenant up to its weight),
 * starting after the tenant last served, so neither arrival order nor tenant ids decide who waits.
 * The Redis due index's claim script (`delivery/due-index/scripts/claim.lua`) applies the same rules; the
 * conformance suite holds both to them.
 */

/** Lane 0: transactional; 1: bulk. */
export type Lane = 0 | 1;

/** What one tenant has due in one lane: at most `available` messages may be taken. */
export interface TenantDemand {
  tenantId: string;
  lane: Lane;
  available: number;
}

/** The dispatcher's side of a claim: its slots, who holds them, and the tenants' weights. */
export interface SlotState {
  /** SLUICE_SEND_CONCURRENCY: the slots of the partition. */
  concurrency: number;
  /** Slots held per tenant (sends in flight, pace waits included). */
  inFlight: ReadonlyMap<string, number>;
  /** The tenants' send weights (1..100); a tenant not listed weighs 1. */
  weights: ReadonlyMap<string, number>;
  /** Serve tenants after this one first (the last served by the previous claim). */
  after?: string;
  /**
   * Free slots are handed out (step 2) only once at least this many are free: under load a claim
   * per finished send would make many tiny writes. Shares (step 1) are handed out at once.
   */
  minFree?: number;
}

/** How many messages to take of one tenant's lane. */
export interface Take {
  tenantId: string;
  lane: Lane;
  count: number;
}

/** The most slots in flight in one partition: every tenant at its share on top of a full pool. */
export const maxInFlight = (concurrency: number) => 2 * concurrency;

/** A tenant's weight in `state` (1 when not listed). */
export const weightOf = (state: Pick<SlotState, 'weights'>, tenantId: string) => state.weights.get(tenantId) ?? 1;

/** Each active tenant's share of `concurrency` slots by weight (at least 1). */
export function sharesOf(active: Iterable<string>, state: Pick<SlotState, 'concurrency' | 'weights'>): Map<string, number> {
  const tenants = [...new Set(active)];
  const total = tenants.reduce((sum, tenant) => sum + weightOf(state, tenant), 0);
  return new Map(tenants.map((tenant) => [tenant, Math.max(1, Math.floor((state.concurrency * weightOf(state, tenant)) / total))]));
}

/**
 * What one claim takes of each tenant's due messages, in the order they should leave: shares
 * first, then the free slots, each step transactional before bulk, tenants by weighted round-robin.
 */
export function allocate(demands: readonly TenantDemand[], state: SlotState): Take[] {
  const held = [...state.inFlight.values()].reduce((sum, n) => sum + n, 0);
  const free = Math.max(0, state.concurrency - held);
  let room = Math.max(0, maxInFlight(state.concurrency) - held);
  const shares = sharesOf([...demands.map((d) => d.tenantId), ...state.inFlight.keys()], state);
  const allowance = new Map([...shares].map(([tenant, share]) => [tenant, Math.max(0, share - (state.inFlight.get(tenant) ?? 0))]));
  // A small remainder waits like the free slots do (minFree); a tenant far below its share (a newcomer) does not.
  const owed = new Set(
    [...allowance].filter(([tenant, n]) => n > 0 && n >= Math.min(state.minFree ?? 1, shares.get(tenant) ?? 1)).map(([t]) => t),
  );
  const left = new Map(demands.map((d) => [key(d.tenantId, d.lane), d.available]));
  const taken = new Map<string, Take>();
  const order: Take[] = [];
  const take = (tenantId: string, lane: Lane, count: number) => {
    const k = key(tenantId, lane);
    left.set(k, (left.get(k) ?? 0) - count);
    room -= count;
    let entry = taken.get(k);
    if (!entry) {
      entry = { tenantId, lane, count: 0 };
      taken.set(k, entry);
      order.push(entry);
    }
    entry.count += count;
  };
  // Step 1: up to each tenant's share, whatever the free slots.
  let byShares = 0;
  for (const lane of [0, 1] as const)
    byShares += roundRobin(lanes(demands, lane, state.after), room, state, (tenantId, want) => {
      const n = owed.has(tenantId) ? Math.min(want, allowance.get(tenantId) ?? 0, left.get(key(tenantId, lane)) ?? 0) : 0;
      if (n > 0) {
        allowance.set(tenantId, (allowance.get(tenantId) ?? 0) - n);
        take(tenantId, lane, n);
      }
      return n;
    });
  // Step 2: the free slots the shares left, to anyone with due messages.
  let spare = free >= (state.minFree ?? 1) ? Math.min(room, Math.max(0, free - byShares)) : 0;
  for (const lane of [0, 1] as const) {
    if (spare <= 0) break;
    spare -= roundRobin(lanes(demands, lane, state.after), spare, state, (tenantId, want) => {
      const n = Math.min(want, left.get(key(tenantId, lane)) ?? 0);
      if (n > 0) take(tenantId, lane, n);
      return n;
    });
  }
  return order;
}

const key = (tenantId: string, lane: Lane) => `${lane}:${tenantId}`;

/** The tenants with demand in `lane`, in ring order starting after `after`. */
function lanes(demands: readonly TenantDemand[], lane: Lane, after: string | undefined): string[] {
  const tenants = [...new Set(demands.filter((d) => d.lane === lane && d.available > 0).map((d) => d.tenantId))].sort();
  if (after === undefined) return tenants;
  const start = tenants.findIndex((tenant) => tenant > after);
  return start <= 0 ? tenants : [...tenants.slice(start), ...tenants.slice(0, start)];
}

/**
 * Weighted round-robin over `tenants` until `budget` is spent or no one takes: each round offers
 * every tenant up to its weight; `offer` returns how many it took. Returns the total taken.
 */
function roundRobin(
  tenants: readonly string[],
  budget: number,
  state: Pick<SlotState, 'weights'>,
  offer: (tenantId: string, want: number) => number,
): number {
  let spent = 0;
  let active = [...tenants];
  while (spent < budget && active.length > 0) {
    const next: string[] = [];
    for (const tenant of active) {
      if (spent >= budget) break;
      const got = offer(tenant, Math.min(weightOf(state, tenant), budget - spent));
      spent += got;
      if (got > 0) next.push(tenant);
    }
    active = next;
  }
  return spent;
}
