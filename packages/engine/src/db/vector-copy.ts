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
