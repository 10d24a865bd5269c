/**
 * A tenant's backlog: per channel and lane, what is due now, scheduled later and in flight, and
 * the due message that has waited longest, linked to its timeline. Only lanes with something in
 * them are listed; a refresh button reads it again (it is a count as of its time, not live).
 */
import type { TenantBacklog as Backlog } from '../../../src/client/index.js';
import { href } from '../router.js';
import { ErrorAlert } from '../ui/alert.js';
import { useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';

type LaneRow = Backlog['lanes'][number];

const busy = (lane: LaneRow) => lane.due + lane.scheduledLater + lane.sending > 0;

export function TenantBacklog({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const backlog = useLoad(() => client.admin.getTenantBacklog(tenantId), [tenantId]);
  const lanes = (backlog.value?.lanes ?? []).filter(busy);
  return (
    <section aria-labelledby="tenant-backlog">
      <h2 id="tenant-backlog">Backlog</h2>
      <ErrorAlert error={backlog.error} />
      <p>
        {backlog.value ? `As of ${backlog.value.at}. ` : ''}
        <button type="button" disabled={backlog.loading} onClick={backlog.reload}>
          Refresh backlog
        </button>
      </p>
      {backlog.value && lanes.length === 0 ? <p>Nothing waits to be sent.</p> : null}
      {lanes.length > 0 ? (
        <table>
          <caption class="visually-hidden">Backlog by channel and lane</caption>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Lane</th>
              <th scope="col">Due</th>
              <th scope="col">Scheduled later</th>
              <th scope="col">Sending</th>
              <th scope="col">Oldest due</th>
            </tr>
          </thead>
          <tbody>
            {lanes.map((lane) => (
              <tr key={`${lane.channel}/${lane.lane}`}>
                <td>{lane.channel}</td>
                <td>{lane.lane}</td>
                <td>{lane.due}</td>
                <td>{lane.scheduledLater}</td>
                <td>{lane.sending}</td>
                <td>
                  {lane.oldestDue ? (
                    <>
                      <a href={href('messages', tenantId, lane.oldestDue.id)}>{lane.oldestDue.id}</a>, due {lane.oldestDue.dueAt}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
