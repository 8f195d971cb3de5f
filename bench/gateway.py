#!/usr/bin/env python3
"""bench/gateway.py: `skillbundle serve` in front of an agent, against the same agent
called directly, under the same bounded loopback load, for each of two upstream agents.

  scripts/test-parts && target/py-venv/bin/python bench/gateway.py [--requests N] [--concurrency C]

The upstreams are the gateway tests' agents, which know nothing of skillbundle:
  a2a-sdk       tests/gateway/upstream.py (a2a-sdk 1.3.0 on uvicorn, one process)
  @a2a-js/sdk   tests/js/upstream.cjs (@a2a-js/sdk 1.3.0 on express, one node process)
each with `skillbundle serve` (the release binary unless --bin) in front of it, all on
127.0.0.1. One client process sends valid JSON-RPC `SendMessage` requests (the worked
example, the extension activated), C at a time (default 16), N through each of the four
paths (default 10,000), after 1,000 each to warm up, in batches of 1,000 that alternate
between the paths (in an order reversed every round) so a change in machine load hits all
alike. It reports, per upstream, throughput and latency
percentiles direct and through the gateway, their ratios and the latency the gateway
adds.

Then the memory run: M more requests (default 100,000) through each gateway alone, with
the gateway's resident set size (VmRSS) read every tenth of them. The gateway keeps a
bounded index of the Tasks it governs (65,536 entries), so its RSS may rise while that
index fills and must then stay flat: nothing in it grows with the requests it served.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSION_URI = "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1"
UPSTREAMS = ("a2a-sdk", "@a2a-js/sdk")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_upstream(kind: str) -> tuple[subprocess.Popen, str]:
    """The upstream's process and its JSON-RPC URL (from its card)."""
    if kind == "a2a-sdk":
        argv = [sys.executable, str(ROOT / "tests" / "gateway" / "upstream.py")]
    else:
        argv = ["node", str(ROOT / "tests" / "js" / "upstream.cjs")]
    env = {**os.environ, "NODE_PATH": str(ROOT / "target" / "test-parts" / "js" / "node_modules")}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if not line:
        raise SystemExit(f"the {kind} upstream did not start (scripts/test-parts installs its parts)")
    return proc, f"http://127.0.0.1:{json.loads(line)['port']}"


def jsonrpc_url(base: str) -> str:
    import httpx

    card = httpx.get(f"{base}/.well-known/agent-card.json", timeout=10).json()
    return next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC")


def start_gateway(binary: str, bundle: Path, jwk: Path, upstream: str) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--bundle", str(bundle), "--trust", str(jwk), "--upstream", upstream,
                             "--listen", f"127.0.0.1:{port}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the gateway did not become ready")
        time.sleep(0.1)


async def batch(http, url: str, request: dict, n: int, concurrency: int, start_id: int) -> tuple[float, list[float]]:
    headers = {"A2A-Version": "1.0", "A2A-Extensions": EXTENSION_URI, "Content-Type": "application/json"}
    data = json.dumps(request)
    latencies: list[float] = []
    next_id = iter(range(start_id, start_id + n))

    async def worker() -> None:
        for i in next_id:
            body = ('{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"role":"ROLE_USER",'
                    '"messageId":"m-%d","extensions":["%s"],"parts":[{"data":%s}]}}}') % (i, i, EXTENSION_URI, data)
            t = time.perf_counter()
            r = await http.post(url, content=body, headers=headers)
            latencies.append(time.perf_counter() - t)
            state = r.json()["result"]["task"]["status"]["state"]
            if state != "TASK_STATE_COMPLETED":
                raise SystemExit(f"{url}: request {i} ended {state}")

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0, latencies


async def load(paths: dict[tuple[str, str], str], request: dict, total: int, concurrency: int,
               per_batch: int) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    results = {p: {"seconds": 0.0, "latencies": []} for p in paths}
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        for p, url in paths.items():  # warm-up (Node's JIT, Python's caches, pools), not counted
            await batch(http, url, request, 1000, concurrency, 10_000_000)
        sent = 0
        order = list(paths.items())
        while sent < total:
            n = min(per_batch, total - sent)
            for p, url in order:
                seconds, lat = await batch(http, url, request, n, concurrency, sent)
                results[p]["seconds"] += seconds
                results[p]["latencies"] += lat
            sent += n
            order.reverse()  # no path always runs right after another
            print(f"  {sent}/{total}", file=sys.stderr, flush=True)
    return results


async def memory(paths: dict[str, str], gateways: dict[str, int], request: dict, total: int, concurrency: int,
                 samples: int) -> dict[str, list[tuple[int, float]]]:
    """`total` requests through each gateway, one upstream after the other; the gateway's
    RSS before the first and after each `total / samples` requests."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    rss: dict[str, list[tuple[int, float]]] = {}
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        for kind, url in paths.items():
            rss[kind] = [(0, rss_mib(gateways[kind]))]
            sent = 0
            step = max(1, total // samples)
            while sent < total:
                n = min(step, total - sent)
                await batch(http, url, request, n, concurrency, 20_000_000 + sent)
                sent += n
                rss[kind].append((sent, rss_mib(gateways[kind])))
                print(f"  memory {kind}: {sent}/{total}", file=sys.stderr, flush=True)
    return rss


def comparison(args: argparse.Namespace, results: dict, load_start: tuple, load_mid: tuple) -> None:
    """The interleaved comparison's table."""

    def pct(lat: list[float], q: float) -> float:
        return statistics.quantiles(lat, n=1000)[int(q * 1000) - 1] * 1000

    print(f"{args.requests:,} valid JSON-RPC SendMessage requests per path (the worked example, one supporting record "
          f"and the result), concurrency {args.concurrency}, batches of {args.batch} alternating between the four "
          f"paths; one client process; {os.cpu_count()} cores; load average (1, 5, 15 min) "
          f"{' '.join(f'{x:.2f}' for x in load_start)} at start, {' '.join(f'{x:.2f}' for x in load_mid)} at end")
    print()
    print("| upstream | path | requests/s | p50 ms | p99 ms | throughput ÷ direct | p99 ÷ direct | added p50 ms "
          "| added p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in UPSTREAMS:
        d = results[(kind, "direct")]
        d_rps, d_p50, d_p99 = args.requests / d["seconds"], pct(d["latencies"], 0.5), pct(d["latencies"], 0.99)
        print(f"| {kind} | direct | {d_rps:,.0f} | {d_p50:.2f} | {d_p99:.2f} | | | | |")
        g = results[(kind, "gateway")]
        g_rps, g_p50, g_p99 = args.requests / g["seconds"], pct(g["latencies"], 0.5), pct(g["latencies"], 0.99)
        print(f"| {kind} | gateway | {g_rps:,.0f} | {g_p50:.2f} | {g_p99:.2f} | {g_rps / d_rps:.3f} | "
              f"{g_p99 / d_p99:.3f} | {g_p50 - d_p50:.2f} | {g_p99 - d_p99:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000,
                        help="requests per path in the interleaved comparison [default: 10,000]")
    parser.add_argument("--memory-requests", type=int, default=100_000,
                        help="requests through each gateway alone in the memory run; 0 skips it [default: 100,000]")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--bin", default=None, help="the skillbundle binary [default: target/release/skillbundle]")
    args = parser.parse_args()
    binary = args.bin or str(ROOT / "target" / "release" / "skillbundle")
    if not Path(binary).exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--bin", "skillbundle"], cwd=ROOT, check=True)
    load_start = os.getloadavg()
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([binary, "keygen", "--out", tmp / "k"], check=True, capture_output=True)
        shutil.copytree(ROOT / "example-skills", tmp / "ws", ignore=shutil.ignore_patterns("dist"))
        subprocess.run([binary, "build", tmp / "ws", "--out", tmp / "dist", "--sign-key", tmp / "k.key"], check=True,
                       capture_output=True)
        (bundle,) = (tmp / "dist").glob("*.tar.gz")
        request = json.loads((ROOT / "example-skills" / "requests" / "evaluate.json").read_text())
        paths: dict[tuple[str, str], str] = {}
        gateways: dict[str, int] = {}
        try:
            for kind in UPSTREAMS:
                up, base = start_upstream(kind)
                procs.append(up)
                gw, gw_url = start_gateway(binary, bundle, tmp / "k.jwk.json", base)
                procs.append(gw)
                gateways[kind] = gw.pid
                paths[(kind, "direct")] = jsonrpc_url(base)
                paths[(kind, "gateway")] = jsonrpc_url(gw_url)
            results = asyncio.run(load(paths, request, args.requests, args.concurrency, args.batch)) \
                if args.requests else {}
            load_mid = os.getloadavg()
            rss = asyncio.run(memory({k: paths[(k, "gateway")] for k in UPSTREAMS}, gateways, request,
                                     args.memory_requests, args.concurrency, 10)) if args.memory_requests else {}
        finally:
            for p in procs:
                if p.poll() is None:
                    os.kill(p.pid, signal.SIGTERM)
            for p in procs:
                p.wait(timeout=60)
    load_end = os.getloadavg()
    if results:
        comparison(args, results, load_start, load_mid)
    if rss:
        print()
        print(f"Memory: {args.memory_requests:,} more requests through each gateway alone, concurrency "
              f"{args.concurrency}; load average {' '.join(f'{x:.2f}' for x in load_end)} at end. "
              "The gateway's RSS in MiB after that many requests:")
        print()
        counts = [n for n, _ in next(iter(rss.values()))]
        print("| upstream | " + " | ".join(f"{n:,}" for n in counts) + " |")
        print("|---|" + "---:|" * len(counts))
        for kind, points in rss.items():
            print(f"| {kind} | " + " | ".join(f"{m:.1f}" for _, m in points) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
