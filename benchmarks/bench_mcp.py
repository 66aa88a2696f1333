"""A warm `route` through `kbt mcp` against a `kbt route` process, in the same run.

An agent that shells out pays a whole start-up per question; the MCP server answers from a
KB and a search index it keeps loaded. The two are interleaved (one tool call, one process,
...) so a busy machine slows both alike. The server is driven by the MCP SDK's own client over
stdio, so the figure includes the protocol's round trip. Prints both medians and the ratio;
the issue's aim is a warm call at most a tenth of a CLI start.

    python benchmarks/bench_mcp.py [--runs 21]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ("aclnnInplaceCopy failed, error code is 561103", "精度", "golden casts back to fp16")


async def measure(runs: int) -> tuple[list[float], list[float]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "kb_tools", "mcp", "--root", str(ROOT)], cwd=str(ROOT))
    warm, cli = [], []
    async with Client(params, read_timeout_seconds=120) as client:
        for query in QUERIES:  # first calls load the KB and the index
            await client.call_tool("route", {"query": query})
        for i in range(runs):
            query = QUERIES[i % len(QUERIES)]
            start = time.perf_counter()
            result = await client.call_tool("route", {"query": query})
            warm.append(time.perf_counter() - start)
            assert not result.is_error
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kb_tools", "route", query, "--format", "json"], cwd=ROOT,
                           capture_output=True, check=True)
            cli.append(time.perf_counter() - start)
    return warm, cli


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    warm, cli = asyncio.run(measure(args.runs))
    w, c = statistics.median(warm), statistics.median(cli)
    print(f"warm MCP route   median {w * 1000:7.1f} ms  ({args.runs} calls)")
    print(f"kbt route process median {c * 1000:7.1f} ms  ({args.runs} runs, interleaved)")
    print(f"ratio warm / CLI start: {w / c:.3f}  (aim: <= 0.10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
