// Memory browser, one bank: its memories filtered by space, type, tag, text, a metadata value and a date range,
// paginated; the bank exported to a file or a file imported into it; erase the whole bank after typing its id.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/preact-query';
import { api } from '../api';
import { BankTransfer } from '../components/BankTransfer';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { Pager } from '../components/Pager';
import { formatDate } from '../format';
import { filterExpression, type FilterFields } from '../memory-filter';
import { paths } from '../paths';
import type { MemoryList } from '../types';
import { PAGE_SIZE } from './Banks';

interface Filters extends FilterFields {
  space: string;
  type: string;
  tag: string;
  q: string;
}

const NO_FILTERS: Filters = { space: '', type: '', tag: '', q: '', key: '', value: '', from: '', to: '' };
const TYPES = ['', 'raw', 'world', 'experience', 'opinion', 'observation', 'procedure', 'preference', 'correction'];

export function Bank({ project, bank }: { project: string; bank: string }) {
  const client = useQueryClient();
  const location = useLocation();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const [erasing, setErasing] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<unknown>(null);
  const bankPath = `/v1/me/banks/${encodeURIComponent(bank)}`;
  const memories = useQuery({
    queryKey: ['memories', project, bank, filters, offset],
    queryFn: () =>
      api<MemoryList>('GET', `${bankPath}/memories`, {
        project,
        query: {
          space: filters.space,
          type: filters.type,
          tags: filters.tag,
          q: filters.q,
          filter: filterExpression(filters),
          limit: PAGE_SIZE,
          offset,
        },
      }),
    placeholderData: keepPreviousData,
  });
  const spaces = [...new Set((memories.data?.items ?? []).map((m) => m.space))].filter((s) => s !== '');
  const set =
    (name: keyof Filters) =>
    (e: Event): void =>
      setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  const erase = async (): Promise<void> => {
    try {
      await api('DELETE', bankPath, { project });
      // Removed, not just marked stale: the bank list must not show the erased bank while it refetches.
      client.removeQueries({ queryKey: ['banks', project] });
      client.removeQueries({ queryKey: ['memories', project, bank] });
      location.route(paths.project(project, 'memory'));
    } catch (e) {
      setError(e);
      setErasing(false);
    }
  };
  return (
    <Page title={`Bank ${bank}`}>
      <p>
        <a href={paths.project(project, 'memory')}>All banks</a>
      </p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setFilters({ ...draft });
        }}
      >
        <div class="field">
          <label for="f-space">Space</label>
          <input id="f-space" value={draft.space} onInput={set('space')} list="known-spaces" />
          <datalist id="known-spaces">
            {spaces.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for="f-type">Type</label>
          <select id="f-type" value={draft.type} onChange={set('type')}>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t === '' ? 'Any type' : t}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-tag">Tag</label>
          <input id="f-tag" value={draft.tag} onInput={set('tag')} />
        </div>
        <div class="field">
          <label for="f-q">Text</label>
          <input id="f-q" type="search" value={draft.q} onInput={set('q')} />
        </div>
        <div class="field">
          <label for="f-key">Metadata key</label>
          <input id="f-key" value={draft.key} onInput={set('key')} placeholder="project" autoComplete="off" />
        </div>
        <div class="field">
          <label for="f-value">Metadata value</label>
          <input id="f-value" value={draft.value} onInput={set('value')} aria-describedby="filter-hint" />
        </div>
        <div class="field">
          <label for="f-from">From</label>
          <input id="f-from" type="date" value={draft.from} onInput={set('from')} aria-describedby="filter-hint" />
        </div>
        <div class="field">
          <label for="f-to">To</label>
          <input id="f-to" type="date" value={draft.to} onInput={set('to')} aria-describedby="filter-hint" />
        </div>
        <p id="filter-hint" class="hint filters-hint">
          A metadata value of 3 or true matches a number or boolean, "3" the text; an empty value, any memory with the
          key. From and To are UTC days of the memory's time, both included.
        </p>
        <div class="actions">
          <button type="submit">Filter</button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
              setOffset(0);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <ErrorNotice error={error ?? memories.error} />
      {memories.data === undefined ? (
        <p>Loading…</p>
      ) : memories.data.items.length === 0 ? (
        <p>No memory matches.</p>
      ) : (
        <ul class="memories" aria-label="Memories" aria-busy={memories.isPlaceholderData}>
          {memories.data.items.map((m) => (
            <li key={m.id}>
              <a href={paths.memory(project, bank, m.id)} class="memory-text">
                {m.text}
              </a>
              <div class="hint">
                {m.type} · space {m.space === '' ? '(none)' : m.space} · {formatDate(m.created_at)}
                {/* The time From and To test: when it happened, where that differs from when it was stored. */}
                {m.occurred_at !== null && m.occurred_at !== m.created_at
                  ? ` · happened ${formatDate(m.occurred_at)}`
                  : ''}
                {m.tags.length > 0 ? ` · tags: ${m.tags.join(', ')}` : ''}
              </div>
            </li>
          ))}
        </ul>
      )}
      {memories.data === undefined ? null : (
        // The page shown, not the page asked for: while the next page loads the previous one stays, and says so.
        <Pager
          offset={memories.data.offset}
          limit={PAGE_SIZE}
          total={memories.data.total}
          onOffset={setOffset}
          label="Memories"
        />
      )}
      <BankTransfer project={project} bank={bank} bankPath={bankPath} />
      <h2>Danger zone</h2>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setTyped('');
          setErasing(true);
        }}
      >
        Erase this bank
      </button>
      <ConfirmDialog
        open={erasing}
        title="Erase this bank?"
        confirmLabel="Erase bank"
        canConfirm={typed === bank}
        onConfirm={() => void erase()}
        onCancel={() => setErasing(false)}
      >
        <p>
          Every memory of <strong>{bank}</strong> and everything derived from it is deleted. This cannot be undone.
        </p>
        <label for="erase-confirm">Type the bank id to confirm</label>
        <input id="erase-confirm" value={typed} autoComplete="off" onInput={(e) => setTyped(e.currentTarget.value)} />
      </ConfirmDialog>
    </Page>
  );
}
