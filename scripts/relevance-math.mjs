// The arithmetic shared by scripts/fit-relevance.mjs (the engine's relevance coefficients) and
// scripts/probe-relevance-signals.mjs (candidate signals measured against them): a weighted logistic regression and
// the precision and recall of a threshold over ranked lists.

/** The thresholds docs/api.md tabulates. */
export const THRESHOLDS = [0.1, 0.2, 0.3, 0.5, 0.7];
/** Ridge on the non-intercept coefficients: keeps Newton's steps finite if the classes separate. */
const RIDGE = 1e-3;

/**
 * Weighted logistic regression of `relevant` on [1, ...features(row)] by Newton's method: the coefficients, the
 * intercept first. Each row has `relevant` (0 or 1) and `weight`.
 */
export function fitLogistic(rows, features) {
  const x = rows.map((r) => [1, ...features(r)]);
  const k = x[0].length;
  let w = new Array(k).fill(0);
  for (let iteration = 0; iteration < 50; iteration++) {
    const gradient = new Array(k).fill(0);
    const hessian = Array.from({ length: k }, () => new Array(k).fill(0));
    rows.forEach((r, n) => {
      const xn = x[n];
      const p = logistic(xn, w);
      for (let i = 0; i < k; i++) {
        gradient[i] += r.weight * (r.relevant - p) * xn[i];
        for (let j = 0; j < k; j++) hessian[i][j] += r.weight * p * (1 - p) * xn[i] * xn[j];
      }
    });
    for (let i = 1; i < k; i++) {
      gradient[i] -= RIDGE * w[i];
      hessian[i][i] += RIDGE;
    }
    const step = solve(hessian, gradient);
    w = w.map((v, i) => v + step[i]);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  return w.map(round);
}

/** `1 / (1 + exp(-x . w))`. */
export function logistic(x, w) {
  return 1 / (1 + Math.exp(-x.reduce((z, v, i) => z + v * w[i], 0)));
}

/** Solves the square system A x = b (Gaussian elimination with partial pivoting). */
function solve(A, b) {
  const n = b.length;
  const m = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[pivot][c])) pivot = r;
    [m[c], m[pivot]] = [m[pivot], m[c]];
    for (let r = c + 1; r < n; r++) {
      const f = m[r][c] / m[c][c];
      for (let q = c; q <= n; q++) m[r][q] -= f * m[c][q];
    }
  }
  const x = new Array(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r][n];
    for (let q = r + 1; q < n; q++) s -= m[r][q] * x[q];
    x[r] = s / m[r][r];
  }
  return x;
}

/**
 * Precision and recall of "relevance >= t" over ranked lists. `newList()` answers, for one list, a function giving
 * each row's shown relevance in rank order (with the list cap the engine applies).
 */
export function measure(lists, newList) {
  const totalRelevant = lists.flat().reduce((n, r) => n + r.relevant, 0);
  return THRESHOLDS.map((t) => {
    let kept = 0;
    let hits = 0;
    for (const list of lists) {
      const shown = newList();
      for (const r of list) {
        if (shown(r) < t) break;
        kept++;
        hits += r.relevant;
      }
    }
    return {
      threshold: t,
      kept_per_question: round(kept / lists.length),
      precision: kept === 0 ? null : round(hits / kept),
      recall: totalRelevant === 0 ? null : round(hits / totalRelevant),
    };
  });
}

/** Rows of lists, each weighted so that the lists' rows weigh `total` together. */
export function weighted(lists, total) {
  const rows = lists.flat();
  return rows.map((r) => ({ ...r, weight: total / rows.length }));
}

export function round(n) {
  return Math.round(n * 1e4) / 1e4;
}
