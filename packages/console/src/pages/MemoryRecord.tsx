// Memory browser, one memory: the full record, its validity and history, links to its source and to what superseded
// it, and delete.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { MemoryHistory } from '../components/MemoryHistory';
import { Page } from '../components/Page';
import { formatDate } from '../format';
import { paths } from '../paths';
import type { Memory } from '../types';

export function MemoryRecord({ project, bank, id }: { project: string; bank: string; id: string }) {
  const client = useQueryClient();
  const location = useLocation();
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const path = `/v1/me/banks/${encodeURIComponent(bank)}/memories/${encodeURIComponent(id)}`;
  const memory = useQuery({
    queryKey: ['memory', project, bank, id],
    queryFn: () => api<Memory>('GET', path, { project }),
  });
  const link = (target: string | null) =>
    target === null ? (
      '—'
    ) : (
      <a href={paths.memory(project, bank, target)}>
        <code>{target}</code>
      </a>
    );
  const remove = async (): Promise<void> => {
    try {
      await api('DELETE', path, { project });
      // Removed, not just marked stale: the bank page must not show the deleted memory while it refetches.
      client.removeQueries({ queryKey: ['memories', project, bank] });
      client.removeQueries({ queryKey: ['memory', project, bank, id] });
      location.route(paths.bank(project, bank));
    } catch (e) {
      setError(e);
      setDeleting(false);
    }
  };
  const m = memory.data;
  return (
    <Page title="Memory">
      <p>
        <a href={paths.bank(project, bank)}>Back to bank {bank}</a>
      </p>
      <ErrorNotice error={error ?? memory.error} />
      {m === undefined ? (
        memory.error === null ? (
          <p>Loading…</p>
        ) : null
      ) : (
        <>
          <blockquote class="memory-text" data-testid="memory-text">
            {m.text}
          </blockquote>
          <dl class="record">
            <dt>Id</dt>
            <dd>
              <code>{m.id}</code>
            </dd>
            <dt>Type</dt>
            <dd>{m.type}</dd>
            <dt>State</dt>
            <dd>{m.state}</dd>
            <dt>Space</dt>
            <dd>{m.space === '' ? '(none)' : m.space}</dd>
            <dt>Occurred</dt>
            <dd>{formatDate(m.occurred_at)}</dd>
            <dt>Created</dt>
            <dd>{formatDate(m.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{formatDate(m.updated_at)}</dd>
            <dt>Valid from</dt>
            <dd data-testid="valid-from">{formatDate(m.valid_from)}</dd>
            <dt>Valid until</dt>
            <dd data-testid="valid-to">{m.valid_to === null ? 'current' : formatDate(m.valid_to)}</dd>
            <dt>Expires</dt>
            <dd>{formatDate(m.expires_at)}</dd>
            <dt>Tags</dt>
            <dd>{m.tags.length === 0 ? '—' : m.tags.join(', ')}</dd>
            <dt>Entities</dt>
            <dd>{m.entities.length === 0 ? '—' : m.entities.join(', ')}</dd>
            <dt>Context</dt>
            <dd>{m.context ?? '—'}</dd>
            <dt>Document</dt>
            <dd>{m.document_id ?? '—'}</dd>
            <dt>Source</dt>
            <dd>{link(m.source_id)}</dd>
            <dt>Superseded by</dt>
            <dd data-testid="superseded-by">{link(m.superseded_by)}</dd>
            <dt>Metadata</dt>
            <dd>{Object.keys(m.metadata).length === 0 ? '—' : <pre>{JSON.stringify(m.metadata, null, 2)}</pre>}</dd>
          </dl>
          <MemoryHistory project={project} bank={bank} id={id} path={path} />
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete this memory
          </button>
        </>
      )}
      <ConfirmDialog
        open={deleting}
        title="Delete this memory?"
        confirmLabel="Delete memory"
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(false)}
      >
        <p>The memory and the facts derived from it are deleted for good; recall no longer returns them.</p>
      </ConfirmDialog>
    </Page>
  );
}
