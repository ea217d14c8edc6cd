export const USAGE = `usage: mnemos <command> [options]

Engine and gateway
  serve                         start the engine (MNEMOS_API_* settings; data in MNEMOS_HOME, default ~/.mnemos)
  gateway                       start the multi-tenant gateway (GATEWAY_* settings)
  mcp [--bank <id>]             MCP server over stdio, talking to MNEMOS_URL (an engine or a gateway)
  rotate-key [--phase begin|finish|all]   MNEMOS_API_ENCRYPTION_MASTER_KEY -> MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY
  encrypt-existing              encrypts memories stored before the key was set
  reembed [--batch-size n]      re-embeds every memory with the configured MNEMOS_API_EMBEDDINGS_* model and records it

Memory (against MNEMOS_URL, default http://localhost:8888; MNEMOS_API_KEY for a gateway)
  retain <bank> <text...>       store a memory (text "-" or none: read standard input)
        [--space s] [--tag t]... [--context c] [--timestamp iso] [--metadata k=text|k:=json]...
        [--document-id id] [--expires-at iso]
  recall <bank> <query...>      memories relevant to a query, best first
        [--space s] [--budget low|mid|high] [--max-tokens n] [--type t]... [--tag t]... [--include-org]
        [--min-relevance 0..1] [--filter json]
  reflect <bank> <query...>     an answer from memory with citations (needs an engine with an LLM) [--space s]
  banks [list]                  banks, most recently written first [--q text] [--limit n] [--cursor c]
  banks get <bank> | banks delete <bank> --yes
  memories list <bank>          memories, newest first [--space s] [--type t] [--q text] [--filter json]
        [--limit n] [--cursor c]
  memories get <bank> <id> [<id>...]
  memories update <bank> <id>   edit one memory [--text t] [--tag t]... [--metadata k=text|k:=json]... [--context c]
        [--state valid|invalidated] [--expires-at iso|never]
  memories update <bank> --filter json | --id id...   set on every memory selected [--tag t]... [--metadata ...]...
        [--state valid|invalidated] [--expires-at iso|never] (each field set replaces the old value)
  memories delete <bank> <id> | memories delete <bank> --filter json --yes|--dry-run
  export <bank> [--space s]     the bank as NDJSON on standard output, one memory a line (mnemos export b > b.ndjson)
  import <bank> [--space s] [--format ndjson|mem0]   memories from standard input (an export, or mem0's get_all
        JSON with --format mem0); ids kept, memories already there skipped; exit 1 when a line failed

--metadata k=text sets a string; k:=json any JSON value: --metadata count:=3 --metadata flags:='["a"]'

Common options: --url <url>  --api-key <key>  --tenant <t>  --json (machine-readable output)
`;
