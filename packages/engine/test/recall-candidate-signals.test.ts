import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PoolMember } from '../src/recall/candidate.js';
import { candidates } from '../src/recall/signals.js';
import { NO_KEYWORDS, type VectorRowMeta } from '../src/vectors/storage/indexed-row.js';
import { indexRow } from './helpers/index-row.js';

/** A pool member of retain call `batch` (or document `doc`) at `seq`, with its cosine to the query. */
function member(id: string, cosine: number, group: { batch?: string; doc?: string; seq?: number }, text = id) {
  const meta: VectorRowMeta = {
    ...indexRow(id, 3, text),
    batchId: group.batch ?? null,
    documentId: group.doc ?? null,
    seq: group.seq ?? 0,
  };
  return { meta, cosine, keywords: NO_KEYWORDS } satisfies PoolMember;
}

describe('candidate signals over the pool', () => {
  it("scores a document by its two best members' cosines and keyword matches, a lone memory by its own", () => {
    const pool = [
      member('a', 0.2, { doc: 'chat', seq: 1 }),
      member('b', 0.9, { doc: 'chat', seq: 2 }),
      member('c', 0.5, { doc: 'chat', seq: 3 }),
      member('d', 0.4, { batch: 'call-1', seq: 1 }),
      member('e', 0.3, {}),
    ];
    const keyword = [
      { id: 'a', score: 4 },
      { id: 'c', score: 2 },
      { id: 'e', score: 1 },
    ];
    const byId = new Map(candidates('what about it', pool, keyword, [], []).map((c) => [c.meta.id, c.signals]));
    for (const id of ['a', 'b', 'c']) {
      assert.equal(byId.get(id)?.document, (0.9 + 0.5) / 2, `${id} shares its document's two best cosines`);
      assert.equal(byId.get(id)?.documentKeyword, (1 + 0.5) / 2, `${id} shares its document's two best keywords`);
    }
    assert.equal(byId.get('d')?.document, 0.4, 'a lone member of a retain call is its own document');
    assert.equal(byId.get('e')?.document, 0.3);
    assert.equal(byId.get('e')?.documentKeyword, 0.25 / 2, 'a lone keyword match is halved');
    assert.equal(byId.get('d')?.documentKeyword, 0);
  });

  it('gives the speaker signal to the turns of the one person the query names, every time it is asked', () => {
    const pool = [
      member('a', 0.5, {}, 'Erin: My sister moved to Lisbon.'),
      member('b', 0.5, {}, 'Sam: I moved to Porto.'),
      member('c', 0.5, {}, 'No speaker in this one.'),
    ];
    for (let round = 0; round < 2; round++) {
      const speaker = candidates('Where did Erin move?', pool, [], [], []).map((c) => c.signals.speaker);
      assert.deepEqual(speaker, [1, 0, 0], `round ${round}`);
    }
    assert.deepEqual(
      candidates('Did Erin and Sam meet?', pool, [], [], []).map((c) => c.signals.speaker),
      [0, 0, 0],
      'two names: no speaker signal',
    );
  });
});
