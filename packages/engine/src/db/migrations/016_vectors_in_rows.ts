/**
 * 016: a memory's vector stays in its row. A row with a 384-dimension vector and a few sentences of text is a little
 * over 2 KB, past which Postgres moves its largest value (the vector, which does not compress) into the TOAST table;
 * every vector a recall compares then costs a second index lookup and page. Rows up to 8,160 bytes (the most a page
 * holds) now keep everything in place; larger ones are moved out as before.
 *
 * It applies to rows written from now on; rows already stored move into place when rewritten (`VACUUM FULL
 * memories`, or an online repack), which an operator schedules, since it locks or copies the whole table.
 */
export default `ALTER TABLE memories SET (toast_tuple_target = 8160);`;
