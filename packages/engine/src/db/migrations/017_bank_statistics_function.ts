/**
 * 017: a recall's keyword statistics (the banks' sizes and their terms' document frequencies: the totals plus the
 * deltas not folded yet) come from one function whose plan is made once per session. As a statement, the server
 * planned it at every call (it never chose a plan made for any terms over one made for the terms given), which took
 * longer than running it. Its lookups are equalities on the tables' keys, which one plan serves for any terms.
 */
export default `
CREATE FUNCTION mnemos_bank_statistics(p_tenant text, p_banks text[], p_terms text[])
RETURNS TABLE (term text, n integer)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY SELECT kept.term, sum(kept.n)::int FROM (
    SELECT NULL::text AS term, b.memory_count AS n FROM banks b WHERE b.tenant = p_tenant AND b.bank_id = ANY(p_banks)
    UNION ALL
    SELECT c.term, c.memories FROM bank_term_counts c
    WHERE c.tenant = p_tenant AND c.bank_id = ANY(p_banks) AND c.term = ANY(p_terms)
    UNION ALL
    SELECT d.term, d.memories FROM bank_statistics_deltas d
    WHERE d.tenant = p_tenant AND d.bank_id = ANY(p_banks) AND (d.term IS NULL OR d.term = ANY(p_terms))
  ) kept GROUP BY kept.term;
END $$;
`;
