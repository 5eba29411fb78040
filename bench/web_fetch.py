"""web_fetch end to end on 127.0.0.1: request, guard, decode, HTML→Markdown, format.

Serves the saved pages of tests/tools/web/fixtures/ from a local HTTP server and
fetches each N times (a new URL each time, so the session cache is not used), printing
the median and the best time per page and the share spent converting.

    python bench/web_fetch.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.tools.web.server import LocalServer, Reply  # noqa: E402
from wyckoff_cli.tools.base import ToolContext  # noqa: E402
from wyckoff_cli.tools.web.addresses import AddressGuard  # noqa: E402
from wyckoff_cli.tools.web.client import WebClient  # noqa: E402
from wyckoff_cli.tools.web.convert import convert  # noqa: E402
from wyckoff_cli.tools.web.fetch import WebFetch  # noqa: E402

FIXTURES = ROOT / "tests" / "tools" / "web" / "fixtures"


async def main(repeat: int) -> None:
    fetch = WebFetch(WebClient(AddressGuard(allow_hosts=["127.0.0.1"])))
    ctx = ToolContext(workspace=ROOT)
    with LocalServer() as server:
        print(f"{'page':36} {'KB':>5} {'median ms':>10} {'best ms':>8} {'convert ms':>10}")
        for page in sorted(FIXTURES.glob("*.html")):
            body = page.read_bytes()
            server.route(f"/{page.name}", Reply(200, body, {"Content-Type": "text/html; charset=utf-8"}))
            times = []
            for n in range(repeat):
                start = time.perf_counter()
                await fetch.run({"url": server.url(f"/{page.name}?n={n}")}, ctx)
                times.append(time.perf_counter() - start)
            start = time.perf_counter()
            convert(body, "text/html", "utf-8", server.url(f"/{page.name}"))
            converting = time.perf_counter() - start
            print(
                f"{page.name:36} {len(body) / 1000:5.0f} {statistics.median(times) * 1000:10.1f} "
                f"{min(times) * 1000:8.1f} {converting * 1000:10.1f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    asyncio.run(main(parser.parse_args().repeat))
