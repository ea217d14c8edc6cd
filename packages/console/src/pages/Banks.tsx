// Memory browser, first level: the project's banks, searchable and paginated.
import { useState } from 'preact/hooks';
import { keepPreviousData, useQuery } from '@tanstack/preact-query';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { Table } from '../components/Table';
import { Pager } from '../components/Pager';
import { formatDate, formatNumber } from '../format';
import { paths } from '../paths';
import type { BankList } from '../types';

export const PAGE_SIZE = 20;

export function Banks({ project }: { project: string }) {
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const [offset, setOffset] = useState(0);
  const banks = useQuery({
    queryKey: ['banks', project, q, offset],
    queryFn: () => api<BankList>('GET', '/v1/me/banks', { project, query: { q, limit: PAGE_SIZE, offset } }),
    placeholderData: keepPreviousData,
  });
  return (
    <Page title="Memory">
      <form
        role="search"
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setQ(search.trim());
        }}
      >
        <label for="bank-search">Search banks</label>
        <input id="bank-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      <ErrorNotice error={banks.error} />
      {banks.data === undefined ? (
        <p>Loading…</p>
      ) : banks.data.banks.length === 0 ? (
        <p>
          {q === ''
            ? 'No banks yet: retain a memory (Playground or API) and its bank appears here.'
            : 'No bank matches.'}
        </p>
      ) : (
        <Table caption="Banks" headers={['Bank', 'Memories', 'Last write', 'Created']}>
          {banks.data.banks.map((b) => (
            <tr key={b.bank_id}>
              <td>
                <a href={paths.bank(project, b.bank_id)}>{b.bank_id}</a>
                {b.name !== '' && b.name !== b.bank_id ? <div class="hint">{b.name}</div> : null}
              </td>
              <td>{formatNumber(b.memory_count)}</td>
              <td>{formatDate(b.last_write_at)}</td>
              <td>{formatDate(b.created_at)}</td>
            </tr>
          ))}
        </Table>
      )}
      {banks.data === undefined ? null : (
        <Pager
          offset={banks.data.offset}
          limit={PAGE_SIZE}
          total={banks.data.total}
          onOffset={setOffset}
          label="Banks"
        />
      )}
    </Page>
  );
}
