// Moving a bank's memories in and out: an export saved as an NDJSON file (the format import reads back, here or on
// another engine), and an import of such a file, or of mem0's get_all JSON, into this bank.
import { useState } from 'preact/hooks';
import { useQueryClient } from '@tanstack/preact-query';
import { download, upload } from '../api';
import type { ImportAnswer } from '../types';
import { ErrorNotice } from './ErrorNotice';

/** The most failed lines listed under an import's summary; the rest are counted. */
const FAILED_SHOWN = 5;

export function BankTransfer({ project, bank, bankPath }: { project: string; bank: string; bankPath: string }) {
  const client = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [mem0, setMem0] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ImportAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);

  const exportBank = async (): Promise<void> => {
    setError(null);
    try {
      const blob = await download(`${bankPath}/export`, { project });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${bank}.ndjson`;
      link.click();
      // After the click has handed the file to the browser's download: revoking at once can cancel it in some browsers.
      setTimeout(() => URL.revokeObjectURL(link.href), 0);
    } catch (e) {
      setError(e);
    }
  };
  const importFile = async (): Promise<void> => {
    if (file === null) return;
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const type = mem0 ? 'application/json' : 'application/x-ndjson';
      const query = mem0 ? { format: 'mem0' } : undefined;
      setResult(await upload<ImportAnswer>(`${bankPath}/import`, { blob: file, type }, { project, query }));
      await client.invalidateQueries({ queryKey: ['memories', project, bank] });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="transfer-title">
      <h2 id="transfer-title">Export and import</h2>
      <p class="hint">
        An export is every memory of the bank, one JSON line each, in plain text even when the bank is encrypted at
        rest: keep the file as safe as the bank. Importing it keeps ids and dates and skips memories already here.
      </p>
      <div class="actions">
        <button type="button" onClick={() => void exportBank()}>
          Export memories
        </button>
      </div>
      <form
        class="transfer"
        onSubmit={(e) => {
          e.preventDefault();
          void importFile();
        }}
      >
        <div class="field">
          <label for="import-file">File to import</label>
          <input
            id="import-file"
            type="file"
            accept=".ndjson,.jsonl,.json,application/x-ndjson,application/json"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <label class="check">
          <input type="checkbox" checked={mem0} onChange={(e) => setMem0(e.currentTarget.checked)} />
          The file is a mem0 export (get_all JSON)
        </label>
        <div class="actions">
          <button type="submit" disabled={file === null || busy}>
            {busy ? 'Importing…' : 'Import'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {result === null ? null : (
        <div role="status">
          <p>
            Imported {result.imported}, skipped {result.skipped} already here, {result.failed.length} failed.
          </p>
          {result.failed.length === 0 ? null : (
            <ul aria-label="Lines not imported">
              {result.failed.slice(0, FAILED_SHOWN).map((f) => (
                <li key={f.line}>
                  Line {f.line}: {f.problem}
                </li>
              ))}
              {result.failed.length > FAILED_SHOWN ? <li>and {result.failed.length - FAILED_SHOWN} more</li> : null}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
