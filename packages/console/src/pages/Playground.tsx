// Playground: retain, recall (scores per signal, trace) and reflect (answer with linked citations) on one bank.
import { useState } from 'preact/hooks';
import { useQueryClient } from '@tanstack/preact-query';
import { api, ApiError } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Field, hasErrors, type FieldErrors } from '../components/Field';
import { Page } from '../components/Page';
import { formatScore } from '../format';
import { parseIds } from '../limits';
import { paths } from '../paths';
import type { RecallAnswer, ReflectAnswer, RetainAnswer } from '../types';

const ID = /^[A-Za-z0-9._:@+-]{1,256}$/;
const idError = (value: string, what: string, required: boolean): string | undefined => {
  if (value === '') return required ? `Enter a ${what} id.` : undefined;
  return ID.test(value) ? undefined : `Use letters, digits and . _ : @ + - for the ${what} id.`;
};

interface Props {
  project: string;
  bank: string;
}

function RetainForm({ project, bank }: Props) {
  const client = useQueryClient();
  const [text, setText] = useState('');
  const [space, setSpace] = useState('');
  const [tags, setTags] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<RetainAnswer | null>(null);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const found = {
      bank: idError(bank, 'bank', true),
      'retain-text': text.trim() === '' ? 'Enter the text to remember.' : undefined,
      'retain-space': idError(space, 'space', false),
    };
    setErrors(found);
    if (hasErrors(found)) return;
    setError(null);
    try {
      const body = {
        content: text,
        ...(space === '' ? {} : { space }),
        ...(tags.trim() === '' ? {} : { tags: parseIds(tags) }),
      };
      setResult(
        await api<RetainAnswer>('POST', `/v1/me/banks/${encodeURIComponent(bank)}/memories`, { project, body }),
      );
      setText('');
      await client.invalidateQueries({ queryKey: ['banks', project] });
      await client.invalidateQueries({ queryKey: ['memories', project, bank] });
      await client.invalidateQueries({ queryKey: ['usage', project] });
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="retain-heading">
      <h2 id="retain-heading">Retain</h2>
      <ErrorNotice error={error ?? (errors['bank'] === undefined ? null : new Error(errors['bank']))} />
      <Field
        id="retain-text"
        label="Text"
        multiline
        required
        value={text}
        onInput={setText}
        error={errors['retain-text']}
      />
      <Field
        id="retain-space"
        label="Space (optional)"
        value={space}
        onInput={setSpace}
        error={errors['retain-space']}
      />
      <Field id="retain-tags" label="Tags (optional)" value={tags} onInput={setTags} hint="Separated by commas." />
      <button type="submit" class="primary">
        Retain
      </button>
      {result === null ? null : (
        <p role="status" class="notice">
          Stored {result.memory_ids.length} memory id(s) in {result.bank_id}:{' '}
          {result.memory_ids.map((id) => (
            <a key={id} href={paths.memory(project, bank, id)}>
              <code>{id}</code>{' '}
            </a>
          ))}
        </p>
      )}
    </form>
  );
}

function RecallForm({ project, bank }: Props) {
  const [query, setQuery] = useState('');
  const [space, setSpace] = useState('');
  const [budget, setBudget] = useState('mid');
  const [maxTokens, setMaxTokens] = useState('');
  const [includeOrg, setIncludeOrg] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<RecallAnswer | null>(null);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const tokens = Number(maxTokens);
    const found = {
      bank: idError(bank, 'bank', true),
      'recall-query': query.trim() === '' ? 'Enter a question or a few words to search for.' : undefined,
      'recall-space': idError(space, 'space', false),
      'recall-max-tokens':
        maxTokens === '' || (Number.isInteger(tokens) && tokens >= 1 && tokens <= 1_000_000)
          ? undefined
          : 'Enter a whole number from 1 to 1,000,000.',
    };
    setErrors(found);
    if (hasErrors(found)) return;
    setError(null);
    try {
      const body = {
        query,
        budget,
        trace: true,
        include_org: includeOrg,
        ...(space === '' ? {} : { space }),
        ...(maxTokens === '' ? {} : { max_tokens: tokens }),
      };
      setAnswer(
        await api<RecallAnswer>('POST', `/v1/me/banks/${encodeURIComponent(bank)}/memories/recall`, { project, body }),
      );
    } catch (e) {
      setError(e);
      setAnswer(null);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="recall-heading">
      <h2 id="recall-heading">Recall</h2>
      <ErrorNotice error={error ?? (errors['bank'] === undefined ? null : new Error(errors['bank']))} />
      <Field id="recall-query" label="Query" required value={query} onInput={setQuery} error={errors['recall-query']} />
      <Field
        id="recall-space"
        label="Space (optional)"
        value={space}
        onInput={setSpace}
        error={errors['recall-space']}
      />
      <div class="field">
        <label for="recall-budget">Budget</label>
        <select id="recall-budget" value={budget} onChange={(e) => setBudget(e.currentTarget.value)}>
          <option value="low">low</option>
          <option value="mid">mid</option>
          <option value="high">high</option>
        </select>
      </div>
      <Field
        id="recall-max-tokens"
        label="Max tokens (optional)"
        type="number"
        value={maxTokens}
        onInput={setMaxTokens}
        error={errors['recall-max-tokens']}
        hint="Default 4096."
      />
      <div class="check">
        <input
          type="checkbox"
          id="recall-org"
          checked={includeOrg}
          onChange={(e) => setIncludeOrg(e.currentTarget.checked)}
        />
        <label for="recall-org">Include the space's org memory</label>
      </div>
      <button type="submit" class="primary">
        Recall
      </button>
      {answer === null ? null : (
        <div role="status" aria-label="Recall results">
          <p>
            {answer.results.length} result(s), {answer.usage.tokens} tokens.
          </p>
          <ol class="results">
            {answer.results.map((r) => (
              <li key={r.id} data-memory-id={r.id}>
                <a class="memory-text" href={paths.memory(project, bank, r.id)}>
                  {r.text}
                </a>
                <div class="hint">
                  score {formatScore(r.score)}
                  {r.org === true ? ' · org' : ''} ·{' '}
                  {Object.entries(r.scores)
                    .map(([signal, value]) => `${signal} ${formatScore(value)}`)
                    .join(' · ')}
                </div>
              </li>
            ))}
          </ol>
          {answer.trace === undefined ? null : (
            <details>
              <summary>Trace</summary>
              <pre>{JSON.stringify(answer.trace, null, 2)}</pre>
            </details>
          )}
        </div>
      )}
    </form>
  );
}

const NO_LLM = 'Reflect is not available: this engine has no language model configured (retain and recall still work).';

function ReflectForm({ project, bank }: Props) {
  const [query, setQuery] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<ReflectAnswer | null>(null);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const found = {
      bank: idError(bank, 'bank', true),
      'reflect-query': query.trim() === '' ? 'Enter a question.' : undefined,
    };
    setErrors(found);
    if (hasErrors(found)) return;
    setError(null);
    try {
      setAnswer(
        await api<ReflectAnswer>('POST', `/v1/me/banks/${encodeURIComponent(bank)}/reflect`, {
          project,
          body: { query },
        }),
      );
    } catch (e) {
      setAnswer(null);
      setError(e instanceof ApiError && e.code === 'llm_not_configured' ? new Error(`${NO_LLM} ${e.detail}`) : e);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="reflect-heading">
      <h2 id="reflect-heading">Reflect</h2>
      <ErrorNotice error={error ?? (errors['bank'] === undefined ? null : new Error(errors['bank']))} />
      <Field
        id="reflect-query"
        label="Question"
        required
        value={query}
        onInput={setQuery}
        error={errors['reflect-query']}
      />
      <button type="submit" class="primary">
        Reflect
      </button>
      {answer === null ? null : (
        <div role="status" aria-label="Reflect answer">
          <p class="answer">{answer.text}</p>
          <p>
            Citations:{' '}
            {answer.citations.length === 0
              ? 'none'
              : answer.citations.map((id, i) => (
                  <a key={id} href={paths.memory(project, bank, id)} class="citation">
                    [{i + 1}] <code>{id.slice(0, 8)}</code>{' '}
                  </a>
                ))}
          </p>
        </div>
      )}
    </form>
  );
}

export function Playground({ project }: { project: string }) {
  const [bank, setBank] = useState('my-agent');
  return (
    <Page title="Playground">
      <p>Try the memory API on a bank of this project. Calls count against your usage like any other.</p>
      <Field
        id="bank"
        label="Bank"
        required
        value={bank}
        onInput={setBank}
        error={idError(bank, 'bank', true)}
        hint="A bank is created by its first retain."
      />
      <div class="playground">
        <RetainForm project={project} bank={bank} />
        <RecallForm project={project} bank={bank} />
        <ReflectForm project={project} bank={bank} />
      </div>
    </Page>
  );
}
