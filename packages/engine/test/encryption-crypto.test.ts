import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyAad, blindTsvector, sealBody } from '../src/crypto/encrypting-codec.js';
import { DataKey, decodeWrapped, encodeWrapped, IntegrityError, MasterKey } from '../src/crypto/envelope.js';
import { documentLexemes } from '../src/crypto/normalise.js';
import { memoryPglite } from './helpers/memory-pglite.js';

/** The crypto module on its own: envelope round trips, tamper and move detection, and the JS term normaliser. */

const master = new MasterKey(Buffer.alloc(32, 1));
const other = new MasterKey(Buffer.alloc(32, 2));

describe('envelope', () => {
  it('wraps a data key under a master and unwraps it only for the same bank and master', () => {
    const { key, raw } = DataKey.generate();
    const blob = encodeWrapped({ keyId: key.keyId, wraps: [master.wrap(raw, key.keyId, 'default', 'alice')] });
    assert.deepEqual(master.unwrap(decodeWrapped(blob), 'default', 'alice'), raw);
    assert.equal(other.unwrap(decodeWrapped(blob), 'default', 'alice'), undefined);
    assert.throws(() => master.unwrap(decodeWrapped(blob), 'default', 'bob'), IntegrityError);
    assert.throws(() => decodeWrapped(blob.subarray(0, blob.length - 1)), IntegrityError);
  });

  it('verification checks decrypt only under their own master', () => {
    const check = master.verificationCheck();
    assert.ok(master.verifies(check));
    assert.ok(!other.verifies(check));
    assert.ok(!master.verifies('AAAA'));
  });

  it('seals bodies with the memory bound as associated data; any flipped byte or another row fails', async () => {
    const { key } = DataKey.generate();
    const sealed = await sealBody(key, 'default', 'alice', 'id-1', {
      text: 'Secret plans for Tuesday',
      context: 'c',
      metadata: { a: 'b' },
      entities: ['Tuesday'],
    });
    assert.equal(sealed.text, null);
    assert.ok(sealed.bodyEnc);
    const body = sealed.bodyEnc;
    assert.ok(!body.includes(Buffer.from('Secret')));
    assert.match(key.open(body, bodyAad('default', 'alice', 'id-1')).toString(), /Secret plans/);
    assert.throws(() => key.open(body, bodyAad('default', 'alice', 'id-2')), IntegrityError);
    assert.throws(() => key.open(body, bodyAad('default', 'bob', 'id-1')), IntegrityError);
    for (let i = 0; i < body.length; i += 7) {
      const copy = Buffer.from(body);
      copy[i] = copy[i]! ^ 0x01;
      assert.throws(() => key.open(copy, bodyAad('default', 'alice', 'id-1')), IntegrityError, `byte ${i}`);
    }
  });

  it('blind tokens depend on the bank key and the domain', async () => {
    const a = DataKey.generate().key;
    const b = DataKey.generate().key;
    assert.equal(a.blind('t', 'cat'), a.blind('t', 'cat'));
    assert.notEqual(a.blind('t', 'cat'), b.blind('t', 'cat'));
    assert.notEqual(a.blind('t', 'cat'), a.blind('e', 'cat'));
    assert.match(await blindTsvector(a, 'The cats sat'), /^'[0-9a-f]{32}':2 '[0-9a-f]{32}':3$/);
  });
});

describe('term normalisation matches Postgres english on ordinary prose', () => {
  it('gives the same lexemes and positions as to_tsvector(english)', async () => {
    const texts = [
      'The quick brown foxes were jumping over the lazy dogs in 2024.',
      "Alice's sister keeps three cats and runs marathons; she's training harder than ever.",
      'Running shoes wear out after about eight hundred kilometres of generously distributed training.',
      'Meetings about the quarterly budget happened on Thursdays, nationally and internationally.',
      'He was being helpful, hopefully: connections, connected, connecting, relational, conditional, adjustable.',
      'Über café naïve résumé Zürich',
    ];
    const pg = await memoryPglite();
    try {
      for (const text of texts) {
        const rows = await pg.query<{ lexeme: string; positions: number[] }>(
          "SELECT lexeme, positions FROM unnest(to_tsvector('english', $1))",
          [text],
        );
        const expected = new Map(rows.rows.map((r) => [r.lexeme, [...r.positions]]));
        assert.deepEqual(new Map([...(await documentLexemes(text))].sort()), new Map([...expected].sort()), text);
      }
    } finally {
      await pg.close();
    }
  });
});
