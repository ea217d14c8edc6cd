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
