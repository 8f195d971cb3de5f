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
paths (default 100,000), in batches of 1,000 that alternate between the paths so a change
in machine load hits all alike. It reports, per upstream, throughput and latency
percentiles direct and through the gateway, their ratios and the latency the gateway
adds, and the gateway's resident set size (VmRSS) after a tenth of the requests and after
the last: flat memory means nothing in the gateway grows with the requests it served.
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


async def load(paths: dict[tuple[str, str], str], gateways: dict[str, int], request: dict, total: int,
               concurrency: int, per_batch: int) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    results = {p: {"seconds": 0.0, "latencies": [], "rss": []} for p in paths}
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        for p, url in paths.items():  # warm-up, not counted
            await batch(http, url, request, 200, concurrency, 10_000_000)
        sent = 0
        while sent < total:
            n = min(per_batch, total - sent)
            for p, url in paths.items():
                seconds, lat = await batch(http, url, request, n, concurrency, sent)
                results[p]["seconds"] += seconds
                results[p]["latencies"] += lat
                if p[1] == "gateway":
                    results[p]["rss"].append(rss_mib(gateways[p[0]]))
            sent += n
            print(f"  {sent}/{total}", file=sys.stderr, flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
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
            results = asyncio.run(load(paths, gateways, request, args.requests, args.concurrency, args.batch))
        finally:
            for p in procs:
                if p.poll() is None:
                    os.kill(p.pid, signal.SIGTERM)
            for p in procs:
                p.wait(timeout=60)
    load_end = os.getloadavg()

    def pct(lat: list[float], q: float) -> float:
        return statistics.quantiles(lat, n=1000)[int(q * 1000) - 1] * 1000

    print(f"{args.requests:,} valid JSON-RPC SendMessage requests per path (the worked example, one supporting record "
          f"and the result), concurrency {args.concurrency}, batches of {args.batch} alternating between the four "
          f"paths; one client process; {os.cpu_count()} cores; load average (1, 5, 15 min) "
          f"{' '.join(f'{x:.2f}' for x in load_start)} at start, {' '.join(f'{x:.2f}' for x in load_end)} at end")
    print()
    print("| upstream | path | requests/s | p50 ms | p99 ms | throughput ÷ direct | p99 ÷ direct | added p50 ms "
          "| added p99 ms | gateway RSS after 10 %, MiB | gateway RSS at end, MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in UPSTREAMS:
        d = results[(kind, "direct")]
        d_rps, d_p50, d_p99 = args.requests / d["seconds"], pct(d["latencies"], 0.5), pct(d["latencies"], 0.99)
        print(f"| {kind} | direct | {d_rps:,.0f} | {d_p50:.2f} | {d_p99:.2f} | | | | | | |")
        g = results[(kind, "gateway")]
        g_rps, g_p50, g_p99 = args.requests / g["seconds"], pct(g["latencies"], 0.5), pct(g["latencies"], 0.99)
        print(f"| {kind} | gateway | {g_rps:,.0f} | {g_p50:.2f} | {g_p99:.2f} | {g_rps / d_rps:.3f} | "
              f"{g_p99 / d_p99:.3f} | {g_p50 - d_p50:.2f} | {g_p99 - d_p99:.2f} | "
              f"{g['rss'][len(g['rss']) // 10]:.1f} | {g['rss'][-1]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
