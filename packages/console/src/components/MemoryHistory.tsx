// A memory's versions, oldest first: what changed it, when, and the validity each version had.
import { useQuery } from '@tanstack/preact-query';
import { api } from '../api';
import { formatDate } from '../format';
import type { MemoryVersion } from '../types';
import { ErrorNotice } from './ErrorNotice';
import { Table } from './Table';

export function MemoryHistory({
  project,
  bank,
  id,
  path,
}: {
  project: string;
  bank: string;
  id: string;
  path: string;
}) {
  const history = useQuery({
    queryKey: ['memory-history', project, bank, id],
    queryFn: () => api<{ items: MemoryVersion[] }>('GET', `${path}/history`, { project }),
  });
  const versions = history.data?.items;
  return (
    <section class="memory-history" aria-labelledby="memory-history">
      <h2 id="memory-history">History</h2>
      <ErrorNotice error={history.error} />
      {versions === undefined ? (
        history.error === null ? (
          <p>Loading…</p>
        ) : null
      ) : versions.length === 0 ? (
        <p>No versions recorded: this bank keeps no history, or the memory was stored before history was kept.</p>
      ) : (
        <Table
          caption="Versions of this memory, oldest first"
          headers={['Version', 'Change', 'Changed', 'Valid from', 'Valid until', 'Text']}
        >
          {versions.map((v) => (
            <tr key={v.version} data-testid="memory-version">
              <td>{v.version}</td>
              <td>{v.change}</td>
              <td>{formatDate(v.changed_at)}</td>
              <td>{formatDate(v.valid_from)}</td>
              <td>{formatDate(v.valid_to)}</td>
              <td>{v.text ?? '(forgotten)'}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
