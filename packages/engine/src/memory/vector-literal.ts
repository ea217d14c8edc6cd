import { toSql } from 'pgvector';

/** pgvector's text form of a vector ('[0.1,0.2,...]'), bound as a query parameter and cast with ::vector in SQL. */
export function vectorLiteral(v: ArrayLike<number>): string {
  return toSql(Array.from(v)) as string;
}
