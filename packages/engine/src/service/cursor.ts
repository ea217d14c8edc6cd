import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { invalidField } from '@mnemos/problems';
import { loadCursorKey } from '../crypto/cursor-key.js';
import type { Queryable } from '../db/database.js';

/**
 * Opaque list cursors: the key of a page's last row in the list's order, as base64url JSON tagged with the list it
 * belongs to, then a MAC over the key and the list's scope (tenant, bank, every filter). A cursor names a place in the
 * order, not a position, so rows inserted meanwhile shift nothing; the MAC makes it good only for the list that gave
 * it, with the same filters, and keeps a caller from writing a key of their own.
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

export const ENTITY_CURSOR = Type.Object({
  list: Type.Literal('entities'),
  key: Type.String({ minLength: 1, maxLength: 1024, pattern: '^[^\\u0000]+$' }),
});

/**
 * The list a cursor belongs to: its name, the tenant, the bank and every filter of the request (null when absent), in
 * a fixed order. The page size is not part of it: the same list may be paged on in pages of another size.
 */
export type CursorScope = ReadonlyArray<string | null>;

/** Bytes of the MAC a cursor carries: 128 bits, beyond guessing. */
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Writes and checks the cursors of every list with one key, which all the engines on a database share. Without a key
 * (none made yet: no cursor was ever given) every cursor is refused.
 */
export class CursorSeal {
  constructor(private readonly key: Buffer | null) {}

  /** Whether the database had a key: a seal without one is not worth keeping. */
  get keyed(): boolean {
    return this.key !== null;
  }

  encode<S extends TSchema>(_schema: S, key: Static<S>, scope: CursorScope): string {
    const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
    return `${payload}.${this.mac(payload, scope).toString('base64url')}`;
  }

  /**
   * The key a cursor holds; a cursor this list (with these filters) did not give, or one edited, is a 400 naming
   * `pointer`.
   */
  decode<S extends TSchema>(schema: S, cursor: string, scope: CursorScope, pointer: string): Static<S> {
    const [payload = '', mac = '', ...rest] = cursor.split('.');
    const sealed =
      this.key !== null &&
      rest.length === 0 &&
      BASE64URL.test(payload) &&
      BASE64URL.test(mac) &&
      this.verify(payload, Buffer.from(mac, 'base64url'), scope);
    let value: unknown;
    try {
      value = sealed ? JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) : undefined;
    } catch {
      value = undefined;
    }
    if (!sealed || !Value.Check(schema, value) || !realTimes(value)) {
      throw invalidField(
        pointer,
        'is not a cursor this list answered with these filters; pass the next_cursor of the previous page of the ' +
          'same bank with the same filters, or leave it out to start from the top',
        'query',
      );
    }
    return value;
  }

  private mac(payload: string, scope: CursorScope): Buffer {
    if (this.key === null) throw new Error('no cursor key: load it with make = true before writing a cursor');
    return createHmac('sha256', this.key)
      .update(payload)
      .update('\n')
      .update(JSON.stringify(scope))
      .digest()
      .subarray(0, MAC_BYTES);
  }

  private verify(payload: string, mac: Buffer, scope: CursorScope): boolean {
    return mac.length === MAC_BYTES && timingSafeEqual(mac, this.mac(payload, scope));
  }
}

/** The database's cursor seal; `make` creates its key when there is none yet (only a page that gives a cursor does). */
export async function loadCursorSeal(q: Queryable, make: boolean): Promise<CursorSeal> {
  return new CursorSeal(await loadCursorKey(q, make));
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
