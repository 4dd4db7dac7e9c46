#!/usr/bin/env python3
"""A thousand workspaces per server, measured (make bench-scale, issue 35.6): three `pickup serve`
on one file store and one Redis on loopback (bench_bus.py's cluster), 1,000 workspaces of 50
items, 5,000 live streams in all (half on Mine, half of those owning the items), spread over the
workspaces and the servers. Phases: idle, then writes at a steady rate (registrations and
updates, spread over the workspaces and the servers), then one server restarted, then every
stream's page compared with GET /recent once a reconcile period has passed.

Measured per server: RSS (/proc/PID/status), CPU in % of one core (/proc/PID/stat utime +
stime), store requests by kind (/metrics) and their cost a month at S3's prices; across
servers: registration to card at viewers of the other servers (p50, p95); the restart's store
requests, from its start until every stream reconnected to it has its first page. Writes
target/bench/scale.json; `pickup-bench report` writes it into BENCHMARKS.md (section 8).
Standard library only.

    scripts/bench_scale.py [--workspaces 1000] [--items 50] [--streams 5000] [--servers 3]
                           [--idle 600] [--busy 600] [--rate 20]

The idle phase starts as the streams are open, when every watcher's reconcile period is at its
base (PICKUP_RECONCILE_EVERY, 30 s) and doubles each quiet period up to the ceiling
(PICKUP_RECONCILE_CEILING, 10 min): 30 + 60 + 120 + 240 + 480 s pass before it is reached, so
ten minutes idle measure the way down, not the ceiling. The JSON says both what that model
expects in the phase and the listings a second once at the ceiling (workspaces / ceiling).
"""
import argparse, asyncio, concurrent.futures, datetime, http.client, json, os, random, re, resource, shutil, \
    sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no bytecode cache written beside the scripts by the import
import bench_bus as bus  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
# `pickup token` is a process each: one token covers this many workspaces.
CHUNK = 200
# Subjects of the viewers: Mine viewers named "producer" own every item (the writer's subject).
VIEWER_SUBS = 8
WORKERS = 24


# --- processes --------------------------------------------------------------------------------

def proc(pid):
    """RSS and peak RSS in MB, and CPU seconds (user + system) of one process."""
    with open(f"/proc/{pid}/status") as f:
        status = f.read()
    rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024
    hwm = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
    with open(f"/proc/{pid}/stat") as f:
        # Fields after the command's closing parenthesis start at field 3; utime, stime are 14, 15.
        fields = f.read().rsplit(")", 1)[1].split()
    return {"rss_mb": rss, "hwm_mb": hwm, "cpu_s": (int(fields[11]) + int(fields[12])) / CLK_TCK}


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def snapshot(servers, redis):
    return {"t": time.time(), "req": [bus.store_requests([s]) for s in servers],
            "proc": [proc(s["proc"].pid) for s in servers], "redis": proc(redis.pid), "self": self_cpu()}


def cpu_pct(a, b, seconds):
    return round((b - a) / seconds * 100, 2)


def restart(server):
    """Stop a server (SIGTERM: its streams end, telling their clients to reconnect) and start a
    new one on the same store and bus, with the same environment."""
    server["proc"].terminate()
    server["proc"].wait()
    stopped = time.time()
    return stopped, bus.start_server(server["store"], server["bus"], server["extra"])


class Sampler:
    """Each server's RSS every few seconds: the most seen in each phase."""

    def __init__(self, servers):
        self.servers, self.phase, self.most = servers, None, {}

    async def run(self, every=5.0):
        while True:
            if self.phase:
                most = self.most.setdefault(self.phase, [0.0] * len(self.servers))
                for i, s in enumerate(self.servers):
                    try:
                        most[i] = max(most[i], proc(s["proc"].pid)["rss_mb"])
                    except (OSError, AttributeError):
                        pass
            await asyncio.sleep(every)


# --- HTTP from a thread pool ------------------------------------------------------------------

class Client:
    """Keep-alive HTTP/1.1 from a pool of threads: one connection per thread and server."""

    def __init__(self, workers=WORKERS):
        self.pool = concurrent.futures.ThreadPoolExecutor(workers)
        self.local, self.lock, self.all, self.retries = threading.local(), threading.Lock(), [], 0

    def call(self, server, method, path, tok, body=None):
        conns = self.local.__dict__.setdefault("conns", {})
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {tok}", "Content-Type": "application/json"}
        for attempt in (0, 1):
            conn = conns.get(server["addr"])
            if conn is None:
                host, port = server["addr"].split(":")
                conn = conns[server["addr"]] = http.client.HTTPConnection(host, int(port), timeout=60)
                with self.lock:
                    self.all.append(conn)
            try:
                conn.request(method, path, body=data, headers=headers)
                res = conn.getresponse()
                text = res.read()
            except (http.client.HTTPException, OSError):
                # A keep-alive connection the server closed as idle (PICKUP_HEADER_TIMEOUT): the
                # request never reached it; once more on a new connection.
                conn.close()
                conns.pop(server["addr"], None)
                if attempt:
                    raise
                with self.lock:
                    self.retries += 1
                continue
            if res.status >= 400:
                raise RuntimeError(f"{method} {path} on {server['addr']}: {res.status} {text[:300]!r}")
            return json.loads(text or b"null")

    def reset(self):
        """Close every connection (between phases: the server closes idle ones anyway)."""
        with self.lock:
            for c in self.all:
                c.close()
            self.all.clear()
        # Threads find their closed connections and open new ones (http.client reconnects).

    def close(self):
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.reset()


# --- streams ----------------------------------------------------------------------------------

async def watch(v):
    try:
        await v.run()
    except Exception as e:  # a refusal (status not 200) or a broken connection
        v.error = repr(e)
    finally:
        v.closed = True


def viewer(server, si, ws, tok, mine, sees_all):
    v = bus.Viewer(server, ws, tok, mine)
    v.si, v.sees_all, v.error, v.closed = si, sees_all, None, False
    return v


async def open_streams(viewers, tasks, batch=250, deadline_s=600):
    """Open the streams a batch at a time (so the accept queues keep up), then wait until each
    has its first page."""
    t = time.time()
    for i in range(0, len(viewers), batch):
        for v in viewers[i:i + batch]:
            tasks.append(asyncio.create_task(watch(v)))
        await asyncio.sleep(0.25)
    while any(v.pages == 0 and not v.closed for v in viewers):
        if time.time() - t > deadline_s:
            raise SystemExit(f"{sum(v.pages == 0 for v in viewers)} streams had no first page in {deadline_s} s")
        await asyncio.sleep(0.2)
    failed = [v for v in viewers if v.pages == 0]
    if failed:
        raise SystemExit(f"{len(failed)} of {len(viewers)} streams failed to open, e.g. {failed[0].error}")
    return time.time() - t


def percentile(xs, p):
    return xs[max(0, int(p * len(xs) + 0.999) - 1)] if xs else None


def expected_reconciles(every, ceiling, since_start, until):
    """Reconciles by period, per workspace, in [since_start, until] seconds after the watchers
    started, with no fact: the cadence's 30, 60, 120, … up to the ceiling."""
    t, period, n = 0.0, every, 0
    while t <= until:
        t += period
        if since_start <= t <= until:
            n += 1
        period = min(period * 2, ceiling)
    return n


def ms(x):
    return None if x is None else round(x, 2)


def usd(requests):
    return sum(n / 1000 * bus.PRICE.get(op, 0) for op, n in requests.items())


def diff(a, b):
    return {op: b.get(op, 0) - a.get(op, 0) for op in set(a) | set(b)}


def nonzero(requests):
    return {op: n for op, n in sorted(requests.items()) if n}


def rounded(rates):
    return {op: round(r, 4) for op, r in sorted(rates.items())}


# --- the run ----------------------------------------------------------------------------------

async def scenario(a):
    n_ws, n_srv = a.workspaces, a.servers
    per_server = -(-a.streams // n_srv)
    extra = {"PICKUP_RECONCILE_EVERY": f"{a.reconcile_every:g}s", "PICKUP_RECONCILE_CEILING": f"{a.ceiling:g}s"}
    # bench_bus's limits are 5,000 streams and 8,000 connections a server: raised only if short.
    if per_server > 4000:
        extra.update(PICKUP_MAX_STREAMS=str(per_server * 5 // 4), PICKUP_MAX_STREAMS_PER_WORKSPACE=str(per_server * 5 // 4),
                     PICKUP_MAX_CONNECTIONS=str(per_server * 2))
    store, redis, servers = bus.start_cluster("pickup-bench-scale-", extra, n_srv)
    client = Client()
    sampler = Sampler(servers)
    tasks = [asyncio.create_task(sampler.run())]
    loop = asyncio.get_running_loop()
    wss = [f"s{i}" for i in range(n_ws)]
    tokens = {}

    def tok(sub, w, write=False):
        c = w // CHUNK
        if (sub, c, write) not in tokens:
            tokens[(sub, c, write)] = bus.token(sub, wss[c * CHUNK:(c + 1) * CHUNK], write)
        return tokens[(sub, c, write)]

    out = {"measured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "workspaces": n_ws, "items": a.items, "streams": a.streams, "servers": n_srv, "rate": a.rate,
           "reconcile_every_s": float(a.reconcile_every), "reconcile_ceiling_s": float(a.ceiling),
           "prices_usd_per_1000": bus.PRICE, "nproc": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]}
    try:
        await bus.on_the_bus(servers)
        # Seed: every item registered once, on the servers in turn, a few dozen at a time.
        ids = {ws: [] for ws in wss}
        for w in range(0, n_ws, CHUNK):
            tok("producer", w, True)

        def register(job):
            w, j = job
            rec = client.call(servers[(w + j) % n_srv], "POST", bus.route("items", wss[w]),
                              tok("producer", w, True), {"key": f"seed-{j}", "title": f"Seeded {j}", "status": "running"})
            ids[wss[w]].append(rec["id"])

        t = time.time()
        list(client.pool.map(register, [(w, j) for w in range(n_ws) for j in range(a.items)]))
        out["seed"] = {"registrations": n_ws * a.items, "seconds": round(time.time() - t, 1),
                       "per_s": round(n_ws * a.items / (time.time() - t), 1)}
        print(f"seeded {n_ws * a.items} items in {out['seed']['seconds']} s", file=sys.stderr)
        base = [proc(s["proc"].pid)["rss_mb"] for s in servers]

        # Streams: stream k is on workspace k % W, round r = k // W; server (w + r) % S, so each
        # workspace's streams are on every server; Mine when w + r is odd (half of them); every
        # other Mine viewer is the writer's subject and owns every item, the others own none.
        viewers, n_mine = [], 0
        for k in range(a.streams):
            w, r = k % n_ws, k // n_ws
            si, mine = (w + r) % n_srv, (w + r) % 2 == 1
            owner = mine and n_mine % 2 == 0
            n_mine += mine
            sub = "producer" if owner else f"{'other' if mine else 'viewer'}{k % VIEWER_SUBS}"
            viewers.append(viewer(servers[si], si, wss[w], tok(sub, w), mine, owner or not mine))
        opened = time.time()
        out["open"] = {"seconds": round(await open_streams(viewers, tasks), 1), "mine": n_mine}
        print(f"{a.streams} streams on their first page in {out['open']['seconds']} s", file=sys.stderr)
        per = [{"streams": sum(v.si == i for v in viewers), "watched": len({v.ws for v in viewers if v.si == i}),
                "rss_mb_base": round(base[i], 1)} for i in range(n_srv)]

        # Idle: the start-up reconciles pass first.
        await asyncio.sleep(5)
        client.reset()
        s0 = snapshot(servers, redis)
        sampler.phase = "idle"
        await asyncio.sleep(a.idle)
        s1 = snapshot(servers, redis)
        dt = s1["t"] - s0["t"]
        total = bus.per_s({}, {op: sum(diff(s0["req"][i], s1["req"][i]).get(op, 0) for i in range(n_srv))
                               for op in set().union(*s1["req"])}, dt)
        n = expected_reconciles(a.reconcile_every, a.ceiling, s0["t"] - opened, s1["t"] - opened)
        out["idle"] = {"seconds": round(dt, 1), "per_s": rounded(total), "usd_per_month": round(bus.monthly(total), 2),
                       "model_reconciles_per_workspace": n, "model_list_per_s": round(n_ws * n / dt, 4),
                       "ceiling_list_per_s": round(n_ws / a.ceiling, 4),
                       "ceiling_usd_per_month": round(bus.monthly({"list": n_ws / a.ceiling}), 2)}
        print(f"idle {dt:.0f} s: {out['idle']['per_s']}", file=sys.stderr)

        # Busy: `rate` writes a second, alternately a registration and an update, each on a random
        # workspace, on the servers in turn; a registration's card timed at the other servers'
        # viewers that should show it (not Mine, or Mine owning it).
        rng = random.Random(35)
        registered, errors = [], []

        def write(i, si, w, item):
            ws, writer = wss[w], tok("producer", w, True)
            try:
                if item is None:
                    rec = client.call(servers[si], "POST", bus.route("items", ws), writer,
                                      {"key": f"busy-{i}", "title": f"Busy {i}", "status": "running"})
                    registered.append((ws, rec["id"], time.time(), si))
                    ids[ws].append(rec["id"])
                else:
                    client.call(servers[si], "PUT", bus.route("item", ws, item), writer,
                                {"title": f"Updated {i}", "status": "running", "progress": (i % 100) / 100})
            except Exception as e:
                errors.append(repr(e))

        client.reset()
        sampler.phase = "busy"
        t2, i, pending = time.time(), 0, set()
        while i / a.rate < a.busy:
            await asyncio.sleep(max(0.0, t2 + i / a.rate - time.time()))
            w = rng.randrange(n_ws)
            item = None if i % 2 == 0 else rng.choice(ids[wss[w]])
            fut = loop.run_in_executor(client.pool, write, i, i % n_srv, w, item)
            pending.add(fut)
            fut.add_done_callback(pending.discard)
            i += 1
        if pending:
            await asyncio.wait(pending)
        s2 = snapshot(servers, redis)
        sampler.phase = None
        await asyncio.sleep(2)
        dt2 = s2["t"] - s1["t"]
        busy = bus.per_s({}, {op: sum(diff(s1["req"][j], s2["req"][j]).get(op, 0) for j in range(n_srv))
                              for op in set().union(*s2["req"])}, dt2)
        lat, missed = [], 0
        by_ws = {}
        for v in viewers:
            if v.sees_all:
                by_ws.setdefault(v.ws, []).append(v)
        for ws, id_, acked, on in registered:
            for other in range(n_srv):
                watching = [v for v in by_ws.get(ws, []) if v.si == other and other != on]
                if not watching:
                    continue
                seen = [v.seen[id_] for v in watching if id_ in v.seen]
                if seen:
                    lat.append(max(0.0, min(seen) - acked) * 1000)
                else:
                    missed += 1
        lat.sort()
        out["busy"] = {"seconds": round(dt2, 1), "writes": i, "registrations": len(registered),
                       "updates": i // 2, "errors": len(errors),
                       "per_s": rounded(busy), "usd_per_month": round(bus.monthly(busy), 2),
                       "latency_ms_p50": ms(percentile(lat, 0.5)), "latency_ms_p95": ms(percentile(lat, 0.95)),
                       "latency_samples": len(lat), "missed": missed}
        if errors:
            print(f"{len(errors)} writes failed, e.g. {errors[0]}", file=sys.stderr)
        print(f"busy {dt2:.0f} s: {i} writes, p95 {out['busy']['latency_ms_p95']} ms", file=sys.stderr)

        for j, p in enumerate(per):
            idle_j = bus.per_s(s0["req"][j], s1["req"][j], dt)
            busy_j = bus.per_s(s1["req"][j], s2["req"][j], dt2)
            p.update({"rss_mb_idle": round(s1["proc"][j]["rss_mb"], 1), "rss_mb_busy": round(s2["proc"][j]["rss_mb"], 1),
                      "rss_mb_max": round(max(sampler.most.get(ph, [0] * n_srv)[j] for ph in ("idle", "busy")), 1),
                      "rss_mb_peak": round(s2["proc"][j]["hwm_mb"], 1),
                      "cpu_pct_idle": cpu_pct(s0["proc"][j]["cpu_s"], s1["proc"][j]["cpu_s"], dt),
                      "cpu_pct_busy": cpu_pct(s1["proc"][j]["cpu_s"], s2["proc"][j]["cpu_s"], dt2),
                      "idle_per_s": rounded(idle_j), "busy_per_s": rounded(busy_j),
                      "idle_usd_per_month": round(bus.monthly(idle_j), 2),
                      "busy_usd_per_month": round(bus.monthly(busy_j), 2)})
        out["per_server"] = per
        out["redis"] = {"rss_mb": round(s2["redis"]["rss_mb"], 1),
                        "cpu_pct_idle": cpu_pct(s0["redis"]["cpu_s"], s1["redis"]["cpu_s"], dt),
                        "cpu_pct_busy": cpu_pct(s1["redis"]["cpu_s"], s2["redis"]["cpu_s"], dt2)}
        out["client"] = {"cpu_pct_idle": cpu_pct(s0["self"], s1["self"], dt),
                         "cpu_pct_busy": cpu_pct(s1["self"], s2["self"], dt2)}

        # Restart the last server; its streams reconnect to the new one. Its store requests from
        # its start until every one of them has its first page (and it is on the bus).
        x = n_srv - 1
        others0 = [bus.store_requests([s]) for j, s in enumerate(servers) if j != x]
        t3 = time.time()
        stopped, new = await loop.run_in_executor(None, restart, servers[x])
        started = time.time()
        servers[x] = new
        moved = [j for j, v in enumerate(viewers) if v.si == x]
        for j in moved:
            old = viewers[j]
            viewers[j] = viewer(new, x, old.ws, old.tok, old.mine, old.sees_all)
        await open_streams([viewers[j] for j in moved], tasks)
        await bus.on_the_bus([new])
        ready = time.time()
        at_ready = bus.store_requests([new])
        # Then until its requests stop (6 s without one: a doubt heard on joining the bus, such
        # as a gap in its facts, reconciles the watchers once more up to 5 s after their first
        # reconcile), before any reconcile by period is due.
        req, still = at_ready, 0
        while still < 6 and time.time() - started < 0.8 * a.reconcile_every:
            await asyncio.sleep(1)
            now = bus.store_requests([new])
            still, req = (still + 1 if now == req else 0), now
        settled = time.time()
        others = [bus.store_requests([s]) for j, s in enumerate(servers) if j != x]
        others_req = {}
        for a0, a1 in zip(others0, others):
            for op, n_ in diff(a0, a1).items():
                others_req[op] = others_req.get(op, 0) + n_
        out["restart"] = {"server": x, "stop_s": round(stopped - t3, 1), "start_to_ready_s": round(ready - started, 1),
                          "start_to_settled_s": round(settled - started, 1), "streams": len(moved),
                          "watched": per[x]["watched"], "requests": nonzero(req), "usd": round(usd(req), 4),
                          "requests_to_ready": nonzero(at_ready), "usd_to_ready": round(usd(at_ready), 4),
                          "others_requests": nonzero(others_req), "rss_mb": round(proc(new["proc"].pid)["rss_mb"], 1)}
        print(f"restart: {out['restart']['requests']} in {out['restart']['start_to_settled_s']} s", file=sys.stderr)

        # Nothing stale once a reconcile period has passed: each stream's page is the REST page.
        wait = a.reconcile_every + 5
        await asyncio.sleep(wait)

        def differs(v):
            q = "?filter=mine" if v.mine else ""
            page = client.call(v.server, "GET", bus.route("recent", v.ws) + q, v.tok)
            return [c["id"] for c in page["cards"]] != v.ids

        client.reset()
        first = [v for v, d in zip(viewers, await asyncio.gather(
            *[loop.run_in_executor(client.pool, differs, v) for v in viewers])) if d]
        await asyncio.sleep(2)
        stale = [v for v, d in zip(first, await asyncio.gather(
            *[loop.run_in_executor(client.pool, differs, v) for v in first])) if d]
        out["stale"] = {"waited_s": wait, "viewers": len(viewers), "differed_first": len(first), "stale": len(stale),
                        "closed": sum(v.closed for v in viewers)}
        out["http_retries"] = client.retries
    finally:
        client.close()
        bus.stop_cluster(tasks, servers, redis, store)
    return out


def summary(r):
    lines = [f"{r['workspaces']} workspaces × {r['items']} items, {r['streams']} streams ({r['open']['mine']} Mine) "
             f"on {r['servers']} servers; seeded at {r['seed']['per_s']}/s; streams open in {r['open']['seconds']} s",
             "server streams  RSS MB (base/idle/busy/max)   CPU % idle/busy   idle req/s (list/get/put)   "
             "busy req/s (list/get/put)   $/month idle/busy"]
    for i, p in enumerate(r["per_server"]):
        ir, br = p["idle_per_s"], p["busy_per_s"]
        lines.append(f"  {i}    {p['streams']:5}   {p['rss_mb_base']:.0f}/{p['rss_mb_idle']:.0f}/{p['rss_mb_busy']:.0f}/"
                     f"{p['rss_mb_max']:.0f}            {p['cpu_pct_idle']:.1f}/{p['cpu_pct_busy']:.1f}          "
                     f"{ir.get('list', 0):.2f}/{ir.get('get', 0):.2f}/{ir.get('put', 0):.2f}              "
                     f"{br.get('list', 0):.2f}/{br.get('get', 0):.2f}/{br.get('put', 0):.2f}              "
                     f"{p['idle_usd_per_month']:.2f}/{p['busy_usd_per_month']:.2f}")
    i, b, x, s = r["idle"], r["busy"], r["restart"], r["stale"]
    lines += [
        f"idle {i['seconds']} s: {i['per_s']}, ${i['usd_per_month']}/month; the cadence model expects "
        f"{i['model_reconciles_per_workspace']} reconciles a workspace in it ({i['model_list_per_s']} LIST/s); "
        f"at the ceiling {i['ceiling_list_per_s']} LIST/s, ${i['ceiling_usd_per_month']}/month",
        f"busy {b['seconds']} s: {b['writes']} writes ({b['errors']} failed), {b['per_s']}, ${b['usd_per_month']}/month; "
        f"registration to card at other servers p50 {b['latency_ms_p50']} ms, p95 {b['latency_ms_p95']} ms "
        f"({b['latency_samples']} samples, {b['missed']} never seen)",
        f"restart of server {x['server']}: stopped in {x['stop_s']} s, {x['streams']} streams on their first page "
        f"{x['start_to_ready_s']} s after its start, its store requests then {x['requests_to_ready']} "
        f"(${x['usd_to_ready']}); settled {x['start_to_settled_s']} s after its start: {x['requests']} = ${x['usd']} "
        f"(the other servers meanwhile {x['others_requests'] or 'none'})",
        f"stale after one reconcile period ({s['waited_s']} s, PICKUP_RECONCILE_EVERY {r['reconcile_every_s']:g} s): "
        f"{s['stale']} of {s['viewers']} ({s['differed_first']} differed at the first look)",
        f"redis RSS {r['redis']['rss_mb']} MB, CPU {r['redis']['cpu_pct_idle']}/{r['redis']['cpu_pct_busy']} %; "
        f"this client CPU {r['client']['cpu_pct_idle']}/{r['client']['cpu_pct_busy']} % (idle/busy)",
    ]
    rss = max(p["rss_mb_max"] for p in r["per_server"])
    cpu = max(p["cpu_pct_idle"] for p in r["per_server"])
    p95 = b["latency_ms_p95"]
    for target, met in [(f"RSS < 300 MB a server: {rss:.0f} MB", rss < 300),
                        (f"idle CPU < 5 % of a core: {cpu:.1f} %", cpu < 5),
                        (f"registration to card p95 < 250 ms: {p95} ms", p95 is not None and p95 < 250),
                        (f"nothing stale after one reconcile: {s['stale']}", s["stale"] == 0)]:
        lines.append(f"  {'met' if met else 'NOT MET'}: {target}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspaces", type=int, default=1000)
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--streams", type=int, default=5000)
    ap.add_argument("--servers", type=int, default=3)
    ap.add_argument("--idle", type=float, default=600)
    ap.add_argument("--busy", type=float, default=600)
    ap.add_argument("--rate", type=float, default=20, help="writes a second in the busy phase")
    ap.add_argument("--reconcile-every", type=float, default=30, help="PICKUP_RECONCILE_EVERY, seconds")
    ap.add_argument("--ceiling", type=float, default=600, help="PICKUP_RECONCILE_CEILING, seconds")
    a = ap.parse_args()
    if not shutil.which("redis-server"):
        raise SystemExit("redis-server is not installed: make bench-scale installs it")
    # One descriptor a stream here, and as many in the servers (who inherit the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = a.streams + 4 * WORKERS * a.servers + 256
    if hard != resource.RLIM_INFINITY and hard < need:
        raise SystemExit(f"RLIMIT_NOFILE's hard limit {hard} is below the {need} descriptors this run needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    r = asyncio.run(scenario(a))
    os.makedirs(os.path.join(bus.ROOT, "target/bench"), exist_ok=True)
    with open(os.path.join(bus.ROOT, "target/bench/scale.json"), "w") as f:
        json.dump(r, f, indent=2)
    print(summary(r))


if __name__ == "__main__":
    main()
