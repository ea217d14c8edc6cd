/**
 * The value at index `n` of `values` sorted ascending (`Float64Array.from(values).sort()[n]`) without sorting them:
 * quickselect on a copy, linear on average. Recall's keyword arm needs only its k-th best BM25 score, among up to tens
 * of thousands of matching rows.
 */
export function nthSmallest(values: Float64Array, n: number): number {
  if (n < 0 || n >= values.length) throw new RangeError(`index ${n} is outside 0..${values.length - 1}`);
  const a = Float64Array.from(values);
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    // Median of three as the pivot keeps sorted and reverse-sorted input linear.
    const mid = (lo + hi) >>> 1;
    const pivot = median(a[lo]!, a[mid]!, a[hi]!);
    // Three-way partition: [lo, lt) < pivot, [lt, gt] === pivot, (gt, hi] > pivot; ties never loop.
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i <= gt) {
      const v = a[i]!;
      if (v < pivot) {
        a[i] = a[lt]!;
        a[lt++] = v;
        i++;
      } else if (v > pivot) {
        a[i] = a[gt]!;
        a[gt--] = v;
      } else i++;
    }
    if (n < lt) hi = lt - 1;
    else if (n > gt) lo = gt + 1;
    else return pivot;
  }
  return a[n]!;
}

function median(x: number, y: number, z: number): number {
  if (x < y) return y < z ? y : x < z ? z : x;
  return x < z ? x : y < z ? z : y;
}
