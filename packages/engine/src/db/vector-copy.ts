/**
 * Vectors in PostgreSQL's binary COPY format, for rows of (ord int4, embedding vector). Parsing a 384-float vector
 * from text costs the embedded database about a millisecond; the binary form (pgvector's receive format: int16
 * dimension, int16 unused, then the floats, all big-endian) is copied as is.
 */
export function vectorCopyData(vectors: readonly Float32Array[], firstOrd: number): Uint8Array {
  let size = 11 + 4 + 4 + 2;
  for (const v of vectors) size += 2 + 4 + 4 + 4 + 4 + v.length * 4;
  const out = Buffer.alloc(size);
  let o = out.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
  o = out.writeInt32BE(0, o); // flags
  o = out.writeInt32BE(0, o); // header extension length
  vectors.forEach((v, i) => {
    o = out.writeInt16BE(2, o); // fields in the row
    o = out.writeInt32BE(4, o);
    o = out.writeInt32BE(firstOrd + i, o);
    o = out.writeInt32BE(4 + v.length * 4, o);
    o = out.writeInt16BE(v.length, o);
    o = out.writeInt16BE(0, o);
    for (let k = 0; k < v.length; k++) o = out.writeFloatBE(v[k]!, o);
  });
  out.writeInt16BE(-1, o); // end of data
  return out;
}

/**
 * A vector column read in pgvector's binary send format (the floats, big-endian, after the 4-byte header) as base64
 * text. The vector's text form costs the database a shortest-round-trip formatting of every float and the reader a
 * JSON parse; this form is a copy each way, and about half as many bytes to carry. Text, not bytea: the embedded
 * database's client decodes bytea one byte at a time in JavaScript.
 */
export function binaryVectorSql(column: string): string {
  return `encode(substring(vector_send(${column}) FROM 5), 'base64')`;
}

/** The floats of a vector read with binaryVectorSql (the newlines Postgres puts in base64 are skipped). */
export function vectorFromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const out = new Float32Array(bytes.length >>> 2);
  if (bytes.byteOffset % 4 === 0) {
    // In place: the bytes are this call's own (a slice of Node's pool when small), read once below.
    bytes.swap32();
    out.set(new Float32Array(bytes.buffer, bytes.byteOffset, out.length));
  } else {
    for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatBE(i * 4);
  }
  return out;
}

/**
 * A vector column as binaryVectorSql reads it, with each component rounded to a half float (pgvector's halfvec): half
 * the bytes to carry, for reads whose only use is to rank a few hundred candidates (a cosine moves by under 0.001).
 */
export function binaryHalfVectorSql(column: string): string {
  return `encode(substring(halfvec_send(${column}::halfvec) FROM 5), 'base64')`;
}

/** Every half float's value by its 16 bits, made on first use. */
let halfValues: Float32Array | undefined;

function halfFloats(): Float32Array {
  if (halfValues) return halfValues;
  halfValues = new Float32Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >>> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    halfValues[bits] =
      exponent === 0
        ? sign * 2 ** -14 * (fraction / 1024)
        : exponent === 31
          ? fraction === 0
            ? sign * Infinity
            : Number.NaN
          : sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return halfValues;
}

/** The floats of a vector read with binaryHalfVectorSql. */
export function vectorFromHalfBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const values = halfFloats();
  const out = new Float32Array(bytes.length >>> 1);
  for (let i = 0; i < out.length; i++) out[i] = values[(bytes[2 * i]! << 8) | bytes[2 * i + 1]!]!;
  return out;
}
