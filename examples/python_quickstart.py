"""Mnemos quickstart in Python: retain a few memories, recall them, and reflect if the engine has an LLM.

    npm start                                   # an engine on http://localhost:8888
    pip install ./clients/python                # or: export PYTHONPATH=clients/python/src
    python3 examples/python_quickstart.py [base_url]

Through a gateway: MNEMOS_API_KEY=mnm_live_... python3 examples/python_quickstart.py https://your-gateway
"""

import os
import sys

from mnemos_client import Mnemos, MnemosError


def main() -> int:
    base_url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MNEMOS_URL", "http://localhost:8888")
    m = Mnemos(base_url=base_url, api_key=os.environ.get("MNEMOS_API_KEY"))
    bank = "alice@example.com"

    result = m.retain(bank, "Alice prefers green tea over coffee, especially in the morning.", tags=["drinks"])
    print(f"retained {result.items_count} memory: {result.memory_ids}")
    m.retain_batch(bank, [
        "Alice's birthday is on the 4th of March.",
        {"content": "Alice moved from Paris to Lyon for a new job.", "timestamp": "2024-10-15"},
    ])

    print("\nrecall: what does Alice drink?")
    for memory in m.recall(bank, "What does Alice drink?", max_tokens=512).results:
        print(f"  {memory.score or 0:.3f} [{memory.type}] {memory.text}")

    try:
        answer = m.reflect(bank, "What should I bring Alice for her birthday breakfast?")
        print(f"\nreflect: {answer.text}\n  citing {answer.citations}")
    except MnemosError as error:
        if error.code != "llm_not_configured":
            raise
        print(f"\nreflect skipped: {error.detail}")

    page = m.list_memories(bank, limit=10)
    print(f"\n{page.total} memories in bank {bank}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MnemosError as error:
        print(f"error: {error.status} {error.code}: {error.detail}", file=sys.stderr)
        sys.exit(1)
