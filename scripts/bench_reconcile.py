#!/usr/bin/env python3
"""What a live reconcile lists beside its workspace's viewers' looks (make bench, section 9; issue
47.6). One `pickup serve` without a bus, so that its one watcher reconciles every PICKUP_LIVE_EVERY
(2 s here), on S3 (moto, as `scripts/emulators.sh run` starts it; a file store without it); a
workspace of ITEMS items and the looks of LOOKS viewers; one live stream. Per reconcile: the LIST
requests and keys listed as the store answered them (a proxy in front of moto sees every request:
ListObjectsV2 requests and their KeyCount) and as the server counts them (/metrics:
pickup_store_requests_total{op="list"}, pickup_store_keys_listed_total, over
pickup_live_reconciles_total). A month of one workspace's reconciles at S3's LIST price, at the
base period (30 s) and at the ceiling (10 min). "Before" is the same run on the code before issue
47.6 (BEFORE below), or on PICKUP_BIN_BEFORE when that names a binary. Writes
target/bench/reconcile.json. Standard library only.

    scripts/emulators.sh run -- scripts/bench_reconcile.py [--items 50] [--looks 1000] [--reconciles 10]
"""
import argparse, concurrent.futures, http.client, http.server, json, os, re, shutil, subprocess
import sys, tempfile, threading, time, urllib.parse, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no bytecode cache written beside the scripts by the import
import bench_bus  # noqa: E402  (beside this script: http, token, PRICE)
from contract import SERVER_FNS, route  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = bench_bus.BIN
SECRET = bench_bus.SECRET
WS = "bench"
EVERY_S = 2  # PICKUP_LIVE_EVERY: without a bus, a watcher reconciles at each
BASE_S, CEILING_S = 30, 600  # PICKUP_RECONCILE_EVERY and PICKUP_RECONCILE_CEILING's defaults
# Measured by this script on S3 (moto), 50 items and 1,000 looks, 10 reconciles, with
# PICKUP_BIN_BEFORE built at 8dc5328 (the commit before issue 47.6's fix): what S3 answered, and
# what that server counted (a listing once, whatever its pages; the watcher's copy's own keys too).
BEFORE = {"source": "8dc5328, measured 2026-12-07 on S3 (moto)",
          "store": {"list_per_reconcile": 2.0, "keys_per_reconcile": 1150.0},
          "server": {"list_per_reconcile": 1.0, "keys_per_reconcile": 1258.0}}


class Counting(http.server.BaseHTTPRequestHandler):
    """Hands every request on to the store at `upstream`, counting its listings (ListObjectsV2:
    `GET /{bucket}?list-type=2`) and the keys each answered."""
    upstream = None
    lock = threading.Lock()
    counts = {"listings": 0, "list": 0, "keys": 0, "other": 0}

    def log_message(self, *args):
        pass

    def forward(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        conn.request(self.command, self.path, body, headers)
        res = conn.getresponse()
        data = res.read()
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        with self.lock:
            if self.command == "GET" and query.get("list-type") == ["2"]:
                # A listing's first request carries no continuation token; its next pages do.
                self.counts["listings"] += "continuation-token" not in query
                self.counts["list"] += 1
                m = re.search(rb"<KeyCount>(\d+)</KeyCount>", data)
                self.counts["keys"] += int(m.group(1)) if m else 0
            else:
                self.counts["other"] += 1
        try:
            self.send_response(res.status)
            for k, v in res.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server went (the run's end) before it read the answer

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


def counting_proxy(endpoint):
    Counting.upstream = urllib.parse.urlparse(endpoint)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def start_server(binary, store, env_extra):
    env = dict(os.environ, PICKUP_ADDR="127.0.0.1:0", PICKUP_STORE=store, PICKUP_SECRET=SECRET,
               PICKUP_LOG="error", PICKUP_SITE=os.path.join(ROOT, "dist"), PICKUP_JANITOR_EVERY="0s",
               PICKUP_METRICS_ADDR="127.0.0.1:0", PICKUP_LIVE_EVERY=f"{EVERY_S}s", **env_extra)
    env.pop("PICKUP_BUS", None)
    proc = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    metrics = addr = None
    for line in proc.stdout:  # the server says where each listener is, once it listens
        m = re.search(r"metrics on (http://[\d.:]+/metrics)", line)
        if m:
            metrics = m.group(1)
        m = re.search(r"listening on http://([\d.:]+)", line)
        if m:
            addr = m.group(1)
        if metrics and addr:
            return {"proc": proc, "addr": addr, "metrics": metrics}
    raise SystemExit("pickup exited before listening")


def metric(server, name, label=""):
    text = urllib.request.urlopen(server["metrics"], timeout=10).read().decode()
    return sum(float(n) for n in re.findall(rf'^{name}(?:\{{[^}}]*{label}[^}}]*\}})? ([\d.e+]+)$', text, re.M))


def watch(server, tok):
    """A live stream, open until the server goes; returns once its first page came."""
    host, port = server["addr"].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=None)
    conn.request("GET", route("live", WS), headers={"Authorization": f"Bearer {tok}",
                                                     "Accept": "text/event-stream"})
    res = conn.getresponse()
    assert res.status == 200, res.status
    first = threading.Event()

    def read():
        try:
            for line in res:
                if line.startswith(b"data:"):
                    first.set()
        except OSError:
            pass
    threading.Thread(target=read, daemon=True).start()
    assert first.wait(60), "no first page"
    return conn


def measure(binary, store, env_extra, tokens, a):
    """One server on a fresh workspace: seeded, watched, then `a.reconciles` reconciles counted."""
    s = start_server(binary, store, env_extra)
    try:
        writer, viewers = tokens
        for i in range(a.items):
            bench_bus.http(s, "POST", route("items", WS), writer,
                           {"key": f"item-{i}", "title": f"Item {i}", "status": "running"})
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda tok: bench_bus.http(s, "POST", SERVER_FNS["look"], tok,
                                                     {"ws": WS, "at": now}), viewers))
        watch(s, viewers[0])
        reconciles = lambda: metric(s, "pickup_live_reconciles_total")

        def between_reconciles(at_least):
            """Once `at_least` reconciles have begun, most of a period after the last began: it
            has listed, and the next has not begun (a reconcile is counted as it begins)."""
            while reconciles() < at_least:
                time.sleep(0.05)
            time.sleep(EVERY_S * 0.9)
            return reconciles()

        at0 = between_reconciles(3)  # the start's, and a poll or two
        server0 = (metric(s, "pickup_store_requests_total", 'op="list"'),
                   metric(s, "pickup_store_keys_listed_total"))
        with Counting.lock:
            proxy0 = dict(Counting.counts)
        done = between_reconciles(at0 + a.reconciles) - at0
        with Counting.lock:
            proxy1 = dict(Counting.counts)
        server1 = (metric(s, "pickup_store_requests_total", 'op="list"'),
                   metric(s, "pickup_store_keys_listed_total"))
    finally:
        s["proc"].terminate()
        s["proc"].wait()
    out = {"reconciles": done,
           "server": {"list_per_reconcile": (server1[0] - server0[0]) / done,
                      "keys_per_reconcile": (server1[1] - server0[1]) / done}}
    if env_extra.get("AWS_ENDPOINT"):
        # Per listing the store saw (each reconcile is one): whatever a window's edges cut.
        listings = proxy1["listings"] - proxy0["listings"]
        out["store"] = {"listings": listings,
                        "list_per_reconcile": (proxy1["list"] - proxy0["list"]) / listings,
                        "keys_per_reconcile": (proxy1["keys"] - proxy0["keys"]) / listings}
    return out


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=50)
    p.add_argument("--looks", type=int, default=1000)
    p.add_argument("--reconciles", type=int, default=10)
    a = p.parse_args(argv)
    s3, endpoint = os.environ.get("PICKUP_TEST_S3_URL"), os.environ.get("AWS_ENDPOINT")
    writer = bench_bus.token("producer", [WS], write=True)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        viewers = list(pool.map(lambda i: bench_bus.token(f"viewer-{i}", [WS]), range(a.looks)))
    runs, scratch = {}, []
    before_bin = os.environ.get("PICKUP_BIN_BEFORE")
    for label, binary in [("before", before_bin), ("after", BIN)]:
        if not binary:
            continue
        if s3 and endpoint:
            proxy, via = counting_proxy(endpoint)
            store, env_extra = f"{s3}/bench-reconcile-{label}-{os.getpid()}", {"AWS_ENDPOINT": via}
        else:
            proxy, store_dir = None, tempfile.mkdtemp(prefix="pickup-bench-reconcile-")
            scratch.append(store_dir)
            store, env_extra = f"file://{store_dir}", {}
        try:
            runs[label] = measure(binary, store, env_extra, (writer, viewers), a)
        finally:
            if proxy:
                proxy.shutdown()
    for d in scratch:
        shutil.rmtree(d, ignore_errors=True)
    before = runs.get("before") or BEFORE
    before.setdefault("source", f"PICKUP_BIN_BEFORE={before_bin}, measured in this run")
    result = {"measured_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "items": a.items, "looks": a.looks, "keys_of_items": 3 * a.items,
              "store": "s3 (moto)" if "store" in runs["after"] else "file",
              "reconciles": runs["after"]["reconciles"], "before": before, "after": runs["after"],
              "periods_s": {"base": BASE_S, "ceiling": CEILING_S},
              "price_list_per_1000": bench_bus.PRICE["list"]}
    os.makedirs(os.path.join(ROOT, "target/bench"), exist_ok=True)
    with open(os.path.join(ROOT, "target/bench/reconcile.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
