/**
 * Rows stored as int16 (scalar quantization, one scale per row) and scored in WebAssembly SIMD against the query,
 * quantized the same way for the scan. A 384-dimension vector takes 772 bytes instead of 1,536, about 75 MB less at
 * 100,000 memories. Each component is off by at most half a step (the vector's largest component / 32767), so a cosine
 * moves by about 0.000002 (standard deviation, unit vectors of 384 dimensions), the size of float32 rounding: rankings
 * are those of the float scan. With the query in int16 too, each 8 dimensions take one multiply-add instruction
 * (`i32x4.dot_i16x8_s`) instead of widening and converting both halves to float. int8 would halve the rows again but
 * moves cosines enough to swap near-ties (docs/decisions.md, "Lab figures behind three storage choices").
 *
 * The module is tiny and hand-written; its source (WAT) is below, assembled and embedded as base64, so there is
 * nothing to build or download.
 *
 * (module
 *   (memory (export "memory") 1)
 *   (func (export "dots16") (param $q i32) (param $data i32) (param $rows i32) (param $dim i32) (param $out i32)
 *                           (param $scales i32) (param $qscale f32)
 *     ;; out[r] = qscale * scales[r] * sum over j < dim of q[j] * data[r * dim + j], for r < rows; dim a multiple
 *     ;; of 8; q and data i16 (the query quantized like the rows, with its own scale), scales and out f32; byte
 *     ;; offsets. Each 8 dimensions: one i32x4.dot_i16x8_s (two products per lane, at most 2 * 32767^2, inside i32),
 *     ;; converted to f32 and summed.
 *     (local $r i32) (local $j i32) (local $p i32) (local $bytes i32) (local $acc v128)
 *     (local.set $bytes (i32.shl (local.get $dim) (i32.const 1)))
 *     (local.set $p (local.get $data))
 *     (block $done (loop $rowloop
 *       (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
 *       (local.set $acc (v128.const i32x4 0 0 0 0))
 *       (local.set $j (i32.const 0))
 *       (block $dimdone (loop $dimloop
 *         (br_if $dimdone (i32.ge_u (local.get $j) (local.get $bytes)))
 *         (local.set $acc (f32x4.add (local.get $acc)
 *           (f32x4.convert_i32x4_s (i32x4.dot_i16x8_s
 *             (v128.load (i32.add (local.get $p) (local.get $j)))
 *             (v128.load (i32.add (local.get $q) (local.get $j)))))))
 *         (local.set $j (i32.add (local.get $j) (i32.const 16)))
 *         (br $dimloop)))
 *       (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
 *         (f32.mul
 *           (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
 *                    (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))
 *           (f32.mul (f32.load (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2)))) (local.get $qscale))))
 *       (local.set $p (i32.add (local.get $p) (local.get $bytes)))
 *       (local.set $r (i32.add (local.get $r) (i32.const 1)))
 *       (br $rowloop)))))
 */
const DOTS16_WASM =
  'AGFzbQEAAAABCwFgB39/f39/f30AAwIBAAUDAQABBxMCBm1lbW9yeQIABmRvdHMxNgAACq8BAawBAgR/AXsgA0EBdCEKIAEhCQJAA0AgByACTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQtBACEIAkADQCAIIApPDQEgCyAJIAhq/QAEACAAIAhq/QAEAP26Af36Af3kASELIAhBEGohCAwACwsgBCAHQQJ0aiAL/R8AIAv9HwGSIAv9HwIgC/0fA5KSIAUgB0ECdGoqAgAgBpSUOAIAIAkgCmohCSAHQQFqIQcMAAsLCw==';

let compiled: WebAssembly.Module | null | undefined;

function module(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(DOTS16_WASM, 'base64'));
    } catch {
      compiled = null; // no SIMD support: callers fall back to float rows in JS
    }
  }
  return compiled;
}

const PAGE = 65536;

/**
 * A growable matrix of int16 rows in its own WebAssembly memory. Layout: [query (i16) | rows (i16) ... | scales (f32)
 * | scores (f32)]; the scales and scores areas move when the matrix grows (rows never move).
 */
export class Int16Matrix {
  private readonly memory: WebAssembly.Memory;
  private readonly dots16: (
    q: number,
    data: number,
    rows: number,
    dim: number,
    out: number,
    scales: number,
    queryScale: number,
  ) => void;
  /** Bytes before the first row (the query). */
  private readonly queryBytes: number;
  private capacity = 0;
  private rowsView = new Int16Array(0);
  private scalesView = new Float32Array(0);

  private constructor(
    instance: WebAssembly.Instance,
    readonly dimension: number,
    capacity: number,
  ) {
    const exports = instance.exports as { memory: WebAssembly.Memory; dots16: Int16Matrix['dots16'] };
    this.memory = exports.memory;
    this.dots16 = exports.dots16;
    this.queryBytes = dimension * 2;
    this.reserve(capacity);
  }

  /** A matrix for `dimension`-wide rows, or undefined when SIMD is unavailable or the width is not a multiple of 8. */
  static create(dimension: number, capacity: number): Int16Matrix | undefined {
    const m = dimension % 8 === 0 ? module() : null;
    return m ? new Int16Matrix(new WebAssembly.Instance(m), dimension, capacity) : undefined;
  }

  get rowCapacity(): number {
    return this.capacity;
  }

  /** Makes room for `rows` rows, keeping the ones stored. */
  reserve(rows: number): void {
    if (rows <= this.capacity) return;
    const oldScales = this.scalesOffset(this.capacity);
    const oldCapacity = this.capacity;
    const needed = this.scalesOffset(rows) + rows * 8;
    const have = this.memory.buffer.byteLength;
    if (needed > have) this.memory.grow(Math.ceil((needed - have) / PAGE));
    this.capacity = rows;
    new Uint8Array(this.memory.buffer).copyWithin(this.scalesOffset(rows), oldScales, oldScales + oldCapacity * 4);
    this.rowsView = new Int16Array(this.memory.buffer, this.queryBytes, rows * this.dimension);
    this.scalesView = new Float32Array(this.memory.buffer, this.scalesOffset(rows), rows);
  }

  /** Stores `vector` (quantized) as row `row`. */
  set(row: number, vector: ArrayLike<number>): void {
    this.scalesView[row] = quantize(vector, this.rowsView, row * this.dimension, this.dimension);
  }

  /** Dot product of one row with `query`. */
  dot(row: number, query: Float32Array): number {
    const d = this.dimension;
    const rows = this.rowsView;
    const offset = row * d;
    let a0 = 0;
    let a1 = 0;
    for (let j = 0; j < d; j += 2) {
      a0 += query[j]! * rows[offset + j]!;
      a1 += query[j + 1]! * rows[offset + j + 1]!;
    }
    return (a0 + a1) * this.scalesView[row]!;
  }

  /** Writes row `row` as floats (its quantized values times its step) into the first `dimension` places of `out`. */
  rowInto(row: number, out: Float32Array): void {
    const d = this.dimension;
    const scale = this.scalesView[row]!;
    for (let j = 0; j < d; j++) out[j] = this.rowsView[row * d + j]! * scale;
  }

  /** Scores of the first `rows` rows against `query`: a view valid until the next call or growth. */
  scores(query: Float32Array, rows: number): Float32Array {
    const queryScale = quantize(query, new Int16Array(this.memory.buffer, 0, this.dimension), 0, this.dimension);
    const scales = this.scalesOffset(this.capacity);
    const out = scales + this.capacity * 4;
    this.dots16(0, this.queryBytes, rows, this.dimension, out, scales, queryScale);
    return new Float32Array(this.memory.buffer, out, rows);
  }

  /** Where the scales start: after the rows (a multiple of 4 bytes, dim being a multiple of 8). */
  private scalesOffset(capacity: number): number {
    return this.queryBytes + capacity * this.dimension * 2;
  }
}

/** Writes `vector` into `into[offset ..]` as int16 steps of its largest component / 32767; returns that step. */
function quantize(vector: ArrayLike<number>, into: Int16Array, offset: number, d: number): number {
  let max = 0;
  for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(vector[j]!));
  const scale = max > 0 ? max / 32767 : 1;
  for (let j = 0; j < d; j++) into[offset + j] = roundHalfUp(vector[j]! / scale);
  return scale;
}

/**
 * Math.round (halves towards +infinity), without its cost: the integer below, plus one when the rest is at least a
 * half, as a comparison rather than a branch (the rest is random, so a branch mispredicts on about half the
 * components; loading a bank quantizes every vector). Exact: near a half, `x - floor(x)` has no rounding error.
 */
export function roundHalfUp(x: number): number {
  const below = Math.floor(x);
  return below + Number(x - below >= 0.5);
}
