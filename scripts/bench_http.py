#!/usr/bin/env python3
"""HTTP under load (make bench, section 3): the `recent` route with 1,000 markers on the file
store, 50 connections, wrk on the same machine, next to /healthz in the same run, and the store
requests `recent` cost meanwhile (the server's /metrics, priced at S3's). Writes
target/bench/http.json. Standard library only.

Then section 7, what a "since you looked" visit costs the store (scripts/bench_looks.py, which
writes target/bench/looks.json; run alone, it takes its own flags)."""
import http.client, json, os, re, shutil, subprocess, sys, tempfile, time

import bench_bus, bench_looks  # beside this script
from contract import route

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/pickup")
MARKERS, CONNECTIONS, SECONDS = 1000, 50, 10
SECRET = "bench-secret-bench-secret-bench-secret"


def token(write):
    args = [BIN, "token", "--sub", "bench", "--ws", "bench", "--ttl", "1h"] + (["--write"] if write else [])
    return subprocess.check_output(args, env=dict(os.environ, PICKUP_SECRET=SECRET), text=True).strip()


def seed(addr, tok):
    host, port = addr.split(":")
    conn = http.client.HTTPConnection(host, int(port))
    for i in range(MARKERS):
        body = json.dumps({"key": f"item-{i}", "title": f"Bench item {i}", "status": "running", "progress": 0.5})
        conn.request("POST", route("items", "bench"), body,
                     {"Authorization": f"Bearer {tok}", "Content-Type": "application/json"})
        res = conn.getresponse()
        res.read()
        assert res.status == 201, res.status


def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url, tok=None):
    cmd = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "--latency", url]
    if tok:
        cmd[1:1] = ["-H", f"Authorization: Bearer {tok}"]
    out = subprocess.check_output(cmd, text=True)
    lat = dict((p, ms(v, u)) for p, v, u in re.findall(r"\s(50|99)%\s+([\d.]+)(us|ms|s)", out))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50_ms": lat["50"], "p99_ms": lat["99"], "non_2xx": int(errors.group(1)) if errors else 0}


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        kb = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))
    return kb / 1024


def main():
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: make bench installs it (apt-get install wrk)")
    store = tempfile.mkdtemp(prefix="pickup-bench-http-")
    proc, addr, metrics = bench_looks.start_server(store)
    try:
        seed(addr, token(write=True))
        reader = token(write=False)
        healthz = wrk(f"http://{addr}{route('healthz')}")
        before, started = bench_bus.store_requests([{"metrics": metrics}]), time.monotonic()
        recent = wrk(f"http://{addr}{route('recent', 'bench')}", reader)
        # One workspace read without a pause: what the read cache's loads cost the store.
        after = bench_bus.store_requests([{"metrics": metrics}])
        rates = bench_bus.per_s(before, after, time.monotonic() - started)
        result = {"markers": MARKERS, "connections": CONNECTIONS, "seconds": SECONDS,
                  "tool": f"wrk -t2 -c{CONNECTIONS} -d{SECONDS}s --latency (same machine)",
                  "healthz": healthz, "recent": recent, "peak_rss_mb": round(peak_rss_mb(proc.pid), 1),
                  "ratio_rps": round(recent["rps"] / healthz["rps"], 3),
                  "recent_store_per_s": {op: round(n, 2) for op, n in rates.items() if n},
                  "recent_store_usd_per_month": round(bench_bus.monthly(rates), 2)}
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(store, ignore_errors=True)
    os.makedirs(os.path.join(ROOT, "target/bench"), exist_ok=True)
    with open(os.path.join(ROOT, "target/bench/http.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    bench_looks.main([])


if __name__ == "__main__":
    main()
