#!/usr/bin/env sh
# The mnemos CLI against an engine (npm start) or a gateway (MNEMOS_API_KEY=mnm_live_...).
#   sh examples/cli.sh [base_url]
# From a checkout (after npm ci), `mnemos` is the launcher npm links as node_modules/.bin/mnemos (`npx mnemos`).
set -eu
export MNEMOS_URL="${1:-${MNEMOS_URL:-http://localhost:8888}}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mnemos() { "$here/node_modules/.bin/mnemos" "$@"; }

mnemos retain carol "Carol runs the Berlin office and prefers async updates." --tag work
echo "Carol is vegetarian." | mnemos retain carol -
mnemos recall carol "How should I update Carol?"
mnemos recall carol "food" --json
mnemos banks
mnemos memories list carol
mnemos reflect carol "What should I order for lunch with Carol?" || echo "(reflect needs an engine with an LLM)"
