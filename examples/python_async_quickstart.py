"""Mnemos from asyncio: retain several memories at once, recall, and reflect if the engine has an LLM.

    npm start                                   # an engine on http://localhost:8888
    pip install ./clients/python                # or: export PYTHONPATH=clients/python/src
    python3 examples/python_async_quickstart.py [base_url]

Through a gateway: MNEMOS_API_KEY=mnm_live_... python3 examples/python_async_quickstart.py https://your-gateway
"""

import asyncio
import os
import sys

from mnemos_client import AsyncMnemos, MnemosError


async def main(base_url: str) -> int:
    async with AsyncMnemos(base_url, api_key=os.environ.get("MNEMOS_API_KEY")) as mnemos:
        bank = "bob@example.com"
        # The three retains run concurrently.
        retained = await asyncio.gather(
            mnemos.retain(bank, "Bob is training for the Lyon half marathon in April."),
            mnemos.retain(bank, "Bob is allergic to peanuts.", tags=["health"]),
            mnemos.retain(bank, "Bob prefers morning meetings before 10am."),
        )
        print(f"retained {sum(r.items_count for r in retained)} memories")

        hits = await mnemos.recall(bank, "What should I avoid cooking for Bob?", max_tokens=256)
        for memory in hits:
            print(f"  {memory.score or 0:.3f} [{memory.type}] {memory.text}")

        try:
            answer = await mnemos.reflect(bank, "When should I schedule a call with Bob?")
            print(f"reflect: {answer.text}\n  citing {answer.citations}")
        except MnemosError as error:
            if error.code != "llm_not_configured":
                raise
            print(f"reflect skipped: {error.detail}")
    return 0


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MNEMOS_URL", "http://localhost:8888")
    try:
        sys.exit(asyncio.run(main(url)))
    except MnemosError as error:
        print(f"error: {error.status} {error.code}: {error.detail}", file=sys.stderr)
        sys.exit(1)
