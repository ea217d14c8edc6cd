// Usage this month against the plan's quotas: a gauge per quota, the daily series, and when the counters reset.
import { useQuery } from '@tanstack/preact-query';
import { lazy } from 'preact-iso';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { formatDate, formatNumber } from '../format';
import type { Usage as UsageAnswer } from '../types';

// The chart library loads only when there is a series to draw.
const DailyChart = lazy(() => import('../components/DailyChart').then((m) => m.DailyChart));

const QUOTAS: Array<{ key: 'memories' | 'recalls' | 'reflects'; label: string }> = [
  { key: 'memories', label: 'Memories retained' },
  { key: 'recalls', label: 'Recalls' },
  { key: 'reflects', label: 'Reflects' },
];

export function Usage({ project }: { project: string }) {
  const usage = useQuery({
    queryKey: ['usage', project],
    queryFn: () => api<UsageAnswer>('GET', '/v1/me/usage', { project }),
  });
  const data = usage.data;
  return (
    <Page title="Usage">
      <ErrorNotice error={usage.error} />
      {data === undefined ? (
        <p>Loading…</p>
      ) : (
        <>
          <p>
            Plan <strong>{data.plan}</strong>, period <strong>{data.period}</strong>. Counters reset on{' '}
            <strong data-testid="resets-at">{formatDate(data.resets_at)}</strong>.
          </p>
          <div class="gauges">
            {QUOTAS.map((q) => {
              const { used, limit } = data[q.key];
              const percent = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
              return (
                <div class="gauge" key={q.key} data-metric={q.key}>
                  <h2 id={`gauge-${q.key}`}>{q.label}</h2>
                  <meter
                    aria-labelledby={`gauge-${q.key}`}
                    min={0}
                    max={Math.max(limit, 1)}
                    value={used}
                    low={limit * 0.8}
                    high={limit * 0.95}
                    optimum={0}
                  />
                  <p>
                    <span data-testid={`used-${q.key}`}>{formatNumber(used)}</span> of
                    <span data-testid={`limit-${q.key}`}> {formatNumber(limit)}</span> ({percent.toFixed(1)}%)
                  </p>
                </div>
              );
            })}
          </div>
          <h2>Day by day</h2>
          {data.daily === undefined || data.daily.length === 0 ? (
            <p>No daily counts yet this month.</p>
          ) : (
            <DailyChart days={data.daily} />
          )}
        </>
      )}
    </Page>
  );
}
