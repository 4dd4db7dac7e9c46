#!/usr/bin/env python3
"""Live updates at a store cost that follows changes (make bench, section 6): three `pickup
serve` on one file store and one Redis on loopback; W workspaces of 12 items with 100 viewers
each (half on Mine), spread over the servers. Phases: 60 s idle, 60 s with one registration and
one update a second spread over the servers, then the bus stopped for 30 s. Store requests are
counted from the servers' /metrics (pickup_store_requests_total, summed), priced at S3's request
prices. Writes target/bench/bus.json. Standard library only.

    scripts/bench_bus.py [--workspaces 1,20] [--idle 60] [--busy 60] [--down 30]
                         [--quiet-workspaces 1000] [--quiet 60]

Then the quiet reconcile (issue 35.5): the same three servers and Redis, 1,000 watched
workspaces of one item and one stream each and no writes, with every reconcile period scaled down
30 times (PICKUP_RECONCILE_EVERY 1 s and PICKUP_RECONCILE_CEILING 20 s for 30 s and 10 min), so
that the ceiling is reached in half a minute; the listings a second it then measures, times 20/600,
are what the default periods cost.
"""
import argparse, asyncio, json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no bytecode cache written beside the scripts by the import
from contract import PAGE_EVENT, route  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("PICKUP_BIN", os.path.join(ROOT, "target/release/pickup"))
SECRET = "bench-secret-bench-secret-bench-secret"
SERVERS, VIEWERS, ITEMS, CAP = 3, 100, 12, 8
# S3 Standard request prices (USD per 1,000 requests): LIST and PUT, GET and HEAD.
PRICE = {"list": 0.005, "put": 0.005, "get": 0.0004, "head": 0.0004, "delete": 0.0}
MONTH_S = 30 * 24 * 3600


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_redis(port):
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(7) == b"+PONG\r\n":
                    return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not answer")


def start_server(store, bus, extra=None):
    env = dict(os.environ, PICKUP_ADDR="127.0.0.1:0", PICKUP_STORE=f"file://{store}", PICKUP_SECRET=SECRET,
               PICKUP_LOG="error", PICKUP_SITE=os.path.join(ROOT, "dist"), PICKUP_JANITOR_EVERY="0s",
               PICKUP_METRICS_ADDR="127.0.0.1:0", PICKUP_BUS=bus, PICKUP_MAX_STREAMS="5000",
               PICKUP_MAX_STREAMS_PER_WORKSPACE="5000", PICKUP_MAX_STREAMS_PER_VIEWER="5000",
               PICKUP_MAX_CONNECTIONS="8000")
    env.update(extra or {})
    proc = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    metrics = addr = None
    for line in proc.stdout:
        m = re.search(r"metrics on (http://[\d.:]+/metrics)", line)
        if m:
            metrics = m.group(1)
        m = re.search(r"listening on http://([\d.:]+)", line)
        if m:
            addr = m.group(1)
            break
    if not (addr and metrics):
        raise SystemExit("pickup exited before listening")
    # What it was started with, so that another can be started in its place.
    return {"proc": proc, "addr": addr, "metrics": metrics, "store": store, "bus": bus, "extra": extra}


def start_cluster(prefix, extra=None, n=SERVERS):
    """A file store, a Redis and `n` servers on them (`extra`: their environment on top)."""
    store = tempfile.mkdtemp(prefix=prefix)
    rport = free_port()
    redis = start_redis(rport)
    bus = f"redis://127.0.0.1:{rport}"
    return store, redis, [start_server(store, bus, extra) for _ in range(n)]


def stop_cluster(tasks, servers, redis, store):
    for t in tasks:
        t.cancel()
    for s in servers:
        s["proc"].terminate()
        s["proc"].wait()
    if redis.poll() is None:
        redis.terminate()
        redis.wait()
    shutil.rmtree(store, ignore_errors=True)


async def on_the_bus(servers):
    deadline = time.time() + 20
    while not all("facts on the bus" in readyz(s) for s in servers):
        assert time.time() < deadline, [readyz(s) for s in servers]
        await asyncio.sleep(0.1)


def token(sub, ws, write=False):
    args = [BIN, "token", "--sub", sub, "--ws", ",".join(ws), "--ttl", "2h"] + (["--write"] if write else [])
    return subprocess.check_output(args, env=dict(os.environ, PICKUP_SECRET=SECRET), text=True).strip()


def store_requests(servers):
    total = {}
    for s in servers:
        text = urllib.request.urlopen(s["metrics"], timeout=10).read().decode()
        for op, n in re.findall(r'^pickup_store_requests_total\{op="(\w+)"\} (\d+)', text, re.M):
            total[op] = total.get(op, 0) + int(n)
    return total


def readyz(server):
    return urllib.request.urlopen(f"http://{server['addr']}{route('readyz')}", timeout=10).read().decode()


def http(server, method, path, tok, body=None):
    req = urllib.request.Request(f"http://{server['addr']}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {tok}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read() or b"null")


class Viewer:
    """One live stream, read as a browser would; remembers its last page and when each id
    first appeared on it."""

    def __init__(self, server, ws, tok, mine):
        self.server, self.ws, self.tok, self.mine = server, ws, tok, mine
        self.ids, self.seen, self.pages = [], {}, 0

    async def run(self):
        host, port = self.server["addr"].split(":")
        reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 22)
        q = "?filter=mine" if self.mine else ""
        writer.write((f"GET {route('live', self.ws)}{q} HTTP/1.1\r\nHost: {host}\r\n"
                      f"Authorization: Bearer {self.tok}\r\nAccept: text/event-stream\r\n\r\n").encode())
        await writer.drain()
        status = await reader.readline()
        assert b" 200 " in status, status
        event = None
        while True:
            line = await reader.readline()
            if not line:
                return
            line = line.decode().rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == PAGE_EVENT:
                page = json.loads(line[5:])
                now = time.time()
                self.ids = [c["id"] for c in page["cards"]]
                self.pages += 1
                for i in self.ids:
                    self.seen.setdefault(i, now)


def rest_ids(server, ws, tok, mine):
    page = http(server, "GET", route("recent", ws) + ("?filter=mine" if mine else ""), tok)
    return [c["id"] for c in page["cards"]]


def per_s(before, after, seconds):
    return {op: (after.get(op, 0) - before.get(op, 0)) / seconds for op in set(before) | set(after)}


def monthly(rates):
    return sum(rates.get(op, 0) * MONTH_S / 1000 * PRICE.get(op, 0) for op in rates)


async def scenario(n_ws, idle_s, busy_s, down_s):
    store, redis, servers = start_cluster("pickup-bench-bus-")
    wss = [f"ws{i}" for i in range(n_ws)]
    writer_tok = token("producer", wss, write=True)
    result = {"workspaces": n_ws, "servers": SERVERS, "viewers_per_workspace": VIEWERS, "items": ITEMS}
    tasks = []
    try:
        await on_the_bus(servers)
        for ws in wss:
            for i in range(ITEMS):
                http(servers[i % SERVERS], "POST", route("items", ws), writer_tok,
                     {"key": f"seed-{i}", "title": f"Seeded {i}", "status": "running"})
        viewers = []
        for ws in wss:
            for v in range(VIEWERS):
                mine = v % 2 == 1
                # Mine viewers: some own the seeded items, the others own nothing.
                sub = "producer" if mine and v % 4 == 1 else f"viewer{v}"
                viewers.append(Viewer(servers[v % SERVERS], ws, token(sub, [ws]), mine))
        tasks = [asyncio.create_task(v.run()) for v in viewers]
        deadline = time.time() + 60
        while any(v.pages == 0 for v in viewers):
            assert time.time() < deadline, "some viewers never got a first page"
            await asyncio.sleep(0.1)
        # Let the start-up reconciles pass before counting.
        await asyncio.sleep(2)
        t0, c0 = time.time(), store_requests(servers)
        await asyncio.sleep(idle_s)
        t1, c1 = time.time(), store_requests(servers)
        result["idle"] = {"seconds": round(t1 - t0, 1), "per_s": per_s(c0, c1, t1 - t0)}
        # Busy: one registration and one update a second, spread over the servers; the latency
        # of each registration to a viewer of another server.
        lat, writes, registered = [], 0, []
        t2 = time.time()
        i = 0
        while time.time() - t2 < busy_s:
            tick = time.time()
            ws = wss[i % n_ws]
            on = servers[i % SERVERS]
            rec = http(on, "POST", route("items", ws), writer_tok,
                       {"key": f"busy-{i}", "title": f"Busy {i}", "status": "running"})
            acked = time.time()
            registered.append((ws, rec["id"], acked, on))
            if len(registered) > 1:
                pws, pid, _, pon = registered[-2]
                http(servers[(i + 1) % SERVERS], "PUT", route("item", pws, pid), writer_tok,
                     {"title": "Busy, updated", "status": "running", "progress": 0.5})
            writes += 2
            i += 1
            await asyncio.sleep(max(0, 1 - (time.time() - tick)))
        t3, c3 = time.time(), store_requests(servers)
        await asyncio.sleep(1)
        for ws, id_, acked, on in registered:
            others = [v for v in viewers if v.ws == ws and not v.mine and v.server is not on]
            times = [v.seen[id_] - acked for v in others if id_ in v.seen]
            if times:
                lat.append(max(0.0, min(times)) * 1000)
        lat.sort()
        # The writers' own requests: a registration puts the record and two markers, an
        # update reads the record and puts it.
        own = 3 * len(registered) + 2 * (len(registered) - 1)
        busy = per_s(c1, c3, t3 - t2)
        total = sum(busy.values()) * (t3 - t2)
        result["busy"] = {"seconds": round(t3 - t2, 1), "writes": writes, "per_s": busy,
                          "beyond_the_writers_per_write": round((total - own) / max(1, writes), 3),
                          "latency_ms_p50": lat[len(lat) // 2] if lat else None,
                          "latency_ms_p95": lat[max(0, int(0.95 * len(lat) + 0.999) - 1)] if lat else None,
                          "latency_samples": len(lat)}
        # The bus stopped: the watchers poll; writes go on; then it is back.
        redis.terminate()
        redis.wait()
        t4 = time.time()
        while time.time() - t4 < down_s:
            tick = time.time()
            ws = wss[i % n_ws]
            http(servers[i % SERVERS], "POST", route("items", ws), writer_tok,
                 {"key": f"down-{i}", "title": f"Down {i}", "status": "running"})
            i += 1
            await asyncio.sleep(max(0, 1 - (time.time() - tick)))
        t5, c5 = time.time(), store_requests(servers)
        modes = [readyz(s) for s in servers]
        result["down"] = {"seconds": round(t5 - t4, 1), "per_s": per_s(c3, c5, t5 - t4),
                          "polling": all("bus is down" in m for m in modes)}
        # Nothing lost or stale: every viewer's page is the REST page (within a period).
        await asyncio.sleep(3)
        stale = 0
        for v in viewers:
            if v.ids != rest_ids(v.server, v.ws, v.tok, v.mine):
                stale += 1
        result["stale_viewers_after_down"] = stale
    finally:
        stop_cluster(tasks, servers, redis, store)
    for phase in ("idle", "busy", "down"):
        rates = result[phase]["per_s"]
        result[phase]["usd_per_month"] = round(monthly(rates), 2)
    return result


# The quiet scenario's periods, and the defaults they stand for.
QUIET_EVERY_S, QUIET_CEILING_S = 1, 20
DEFAULT_EVERY_S, DEFAULT_CEILING_S = 30, 600


async def quiet(n_ws, measure_s):
    """Idle watched workspaces on three servers: listings a second once every workspace's
    period has grown to the ceiling (the periods scaled down, as the module says)."""
    periods = {"PICKUP_RECONCILE_EVERY": f"{QUIET_EVERY_S}s", "PICKUP_RECONCILE_CEILING": f"{QUIET_CEILING_S}s"}
    store, redis, servers = start_cluster("pickup-bench-quiet-", periods)
    wss = [f"q{i}" for i in range(n_ws)]
    tasks = []
    try:
        await on_the_bus(servers)
        viewers = []
        for i, ws in enumerate(wss):
            # A token for 200 workspaces at a time: `pickup token` is a process each.
            if i % 200 == 0:
                chunk = wss[i:i + 200]
                writer_tok = token("producer", chunk, write=True)
                viewer_tok = token("viewer", chunk)
            http(servers[i % SERVERS], "POST", route("items", ws), writer_tok,
                 {"key": "only", "title": "The only item", "status": "running"})
            viewers.append(Viewer(servers[i % SERVERS], ws, viewer_tok, False))
        tasks = [asyncio.create_task(v.run()) for v in viewers]
        deadline = time.time() + 120
        while any(v.pages == 0 for v in viewers):
            assert time.time() < deadline, "some viewers never got a first page"
            await asyncio.sleep(0.1)
        # Until every period has grown to the ceiling: 1 + 1 + 2 + 4 + 8 + 16 s, and one more.
        await asyncio.sleep(QUIET_EVERY_S * 33 + QUIET_CEILING_S)
        t0, c0 = time.time(), store_requests(servers)
        await asyncio.sleep(measure_s)
        t1, c1 = time.time(), store_requests(servers)
        rates = per_s(c0, c1, t1 - t0)
        scale = QUIET_CEILING_S / DEFAULT_CEILING_S
        at_defaults = {op: r * scale for op, r in rates.items()}
        return {"workspaces": n_ws, "servers": SERVERS, "streams": len(viewers), "seconds": round(t1 - t0, 1),
                "every_s": QUIET_EVERY_S, "ceiling_s": QUIET_CEILING_S, "per_s_measured": rates,
                "per_s_at_defaults": at_defaults, "usd_per_month_at_defaults": round(monthly(at_defaults), 2),
                "fixed_period_per_s": {"list": n_ws / DEFAULT_EVERY_S},
                "fixed_period_usd_per_month": round(monthly({"list": n_ws / DEFAULT_EVERY_S}), 2)}
    finally:
        stop_cluster(tasks, servers, redis, store)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspaces", default="1,20")
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--busy", type=float, default=60)
    ap.add_argument("--down", type=float, default=30)
    ap.add_argument("--quiet-workspaces", type=int, default=1000)
    ap.add_argument("--quiet", type=float, default=60)
    a = ap.parse_args()
    if not shutil.which("redis-server"):
        raise SystemExit("redis-server is not installed: make bench installs it")
    runs = [asyncio.run(scenario(int(w), a.idle, a.busy, a.down)) for w in a.workspaces.split(",") if w]
    quiet_run = asyncio.run(quiet(a.quiet_workspaces, a.quiet)) if a.quiet_workspaces else None
    # Today's polling, as measured on the main of 2026-12-01 (issue 24): per server and watched
    # workspace, 11.2 listings and 8 record reads a second with 10 + 10 viewers, plus a listing
    # a second per Mine viewer: priced the same way for these loads.
    for r in runs:
        mine = r["viewers_per_workspace"] / 2
        r["polling_before"] = {
            "model": "per server and workspace 1.2 listings/s and 8 record reads/s, plus a listing/s per Mine viewer",
            "per_s": {"list": (1.2 * SERVERS + mine) * r["workspaces"], "get": 8.0 * SERVERS * r["workspaces"]},
        }
        r["polling_before"]["usd_per_month"] = round(monthly(r["polling_before"]["per_s"]), 2)
    out = {"runs": runs, "quiet": quiet_run, "prices_usd_per_1000": PRICE,
           "reconcile_every_s": 30, "live_every_s": 1}
    os.makedirs(os.path.join(ROOT, "target/bench"), exist_ok=True)
    with open(os.path.join(ROOT, "target/bench/bus.json"), "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
