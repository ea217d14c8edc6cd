import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { invalidField } from '@mnemos/problems';

/**
 * Opaque list cursors: the key of a page's last row in the list's order, as base64url JSON tagged with the list it
 * belongs to. A cursor names a place in the order, not a position, so rows inserted meanwhile shift nothing.
 */

/** A time as Postgres prints a timestamptz (ISO DateStyle), microseconds and offset included. */
const PG_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?[+-](\d{2})(:\d{2}){0,2}$/;
const PgTime = Type.String({ pattern: PG_TIME.source });
const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' });

export const MEMORY_CURSOR = Type.Object({
  list: Type.Literal('memories'),
  at: PgTime,
  createdAt: PgTime,
  seq: Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }),
  id: Uuid,
});

export const BANK_CURSOR = Type.Object({
  list: Type.Literal('banks'),
  at: PgTime,
  // Postgres text cannot hold NUL.
  bankId: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000]+$' }),
});

export function encodeCursor<S extends TSchema>(_schema: S, key: Static<S>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key a cursor holds; a cursor that is not one this list gave is a 400 naming `pointer`. */
export function decodeCursor<S extends TSchema>(schema: S, cursor: string, pointer: string): Static<S> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || !Value.Check(schema, value) || !realTimes(value)) {
    throw invalidField(
      pointer,
      "is not a cursor this list answered; pass a previous answer's next_cursor as it is, or leave it out",
      'query',
    );
  }
  return value;
}

/** Whether every time in a key names a real instant (the pattern alone lets through a 31 February or a 25th hour). */
function realTimes(key: unknown): boolean {
  return Object.values(key as object).every((v) => typeof v !== 'string' || !PG_TIME.test(v) || isRealTime(v));
}

function isRealTime(text: string): boolean {
  const [, year, month, day, hour, minute, second, , offsetHours] = (PG_TIME.exec(text) ?? []).map(Number);
  if (year === undefined || month === undefined || day === undefined) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year);
  return (
    year >= 1 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    (hour ?? 24) < 24 &&
    (minute ?? 60) < 60 &&
    (second ?? 60) < 60 &&
    (offsetHours ?? 16) < 16
  );
}
