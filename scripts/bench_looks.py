#!/usr/bin/env python3
""""Since you looked" and pins: what a visit costs the store (make bench, section 7, run at the
end of scripts/bench_http.py). One `pickup serve` on a file store with PICKUP_METRICS_ADDR and
no read cache (each visit reads the store, as one no other visit shares); VIEWERS viewers of
one workspace each make VISITS visits, a visit being what the widget does: the server function
`looked` (POST /api/looked), then `look` (POST /api/look, "Mark seen"). Then each viewer's
first page (GET .../recent) VISITS times, before and after they pin PINS items older than the
page's cap (issue 48.5: a pin costs a visit at most one listing more). The store's requests are
the server's /metrics (pickup_store_requests_total by op) before and after each part, and again
after IDLE seconds with no request (nothing reads a look or a pin on a timer). Priced at S3's
request prices for 10,000 viewers x 20 visits a day, 30 days. Writes target/bench/looks.json.
Standard library only.

    scripts/bench_looks.py [--viewers 20] [--visits 10] [--pins 3] [--idle 5]
"""
import argparse, http.client, json, os, re, shutil, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no bytecode cache written beside the scripts by the import
from contract import SERVER_FNS, route  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("PICKUP_BIN", os.path.join(ROOT, "target/release/pickup"))
SECRET = "bench-secret-bench-secret-bench-secret"
# Items in the workspace: more than a page's cap (8), the oldest ones pinned.
ITEMS = 20
# S3 Standard request prices (USD per 1,000 requests), as scripts/bench_bus.py prices them.
PRICE = {"list": 0.005, "put": 0.005, "get": 0.0004, "head": 0.0004, "delete": 0.0}
PRICED_VIEWERS, PRICED_VISITS_A_DAY, DAYS = 10_000, 20, 30


def start_server(store, **settings):
    """`pickup serve` on `store`, with `settings` (PICKUP_* variables) besides the bench's own."""
    env = dict(os.environ, PICKUP_ADDR="127.0.0.1:0", PICKUP_STORE=f"file://{store}", PICKUP_SECRET=SECRET,
               PICKUP_LOG="error", PICKUP_SITE=os.path.join(ROOT, "dist"), PICKUP_JANITOR_EVERY="0s",
               PICKUP_METRICS_ADDR="127.0.0.1:0", **settings)
    proc = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.PIPE, text=True)
    metrics = addr = None
    for line in proc.stdout:  # the server says where each listener is, once it listens
        m = re.search(r"metrics on (http://[\d.:]+/metrics)", line)
        if m:
            metrics = m.group(1)
        m = re.search(r"listening on http://([\d.:]+)", line)
        if m:
            addr = m.group(1)
        if metrics and addr:
            return proc, addr, metrics
    raise SystemExit("pickup exited before listening")


def token(sub, write=False):
    args = [BIN, "token", "--sub", sub, "--ws", "bench", "--ttl", "1h"] + (["--write"] if write else [])
    return subprocess.check_output(args, env=dict(os.environ, PICKUP_SECRET=SECRET), text=True).strip()


def store_requests(metrics):
    text = urllib.request.urlopen(metrics, timeout=10).read().decode()
    return {op: int(float(n)) for op, n in
            re.findall(r'^pickup_store_requests_total\{op="(\w+)"\} ([\d.e+]+)', text, re.M)}


def minus(after, before):
    return {op: after.get(op, 0) - before.get(op, 0) for op in sorted(set(after) | set(before))
            if after.get(op, 0) - before.get(op, 0)}


def send(conn, tok, method, path, args=None, want=200):
    headers = {"Authorization": f"Bearer {tok}"}
    if args is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, None if args is None else json.dumps(args), headers)
    res = conn.getresponse()
    body = res.read()
    assert res.status == want, (method, path, res.status, body)
    return json.loads(body) if body else None


def call(conn, tok, name, args):
    return send(conn, tok, "POST", SERVER_FNS[name], args)


def priced(counted, visits):
    """Per visit, and a month of PRICED visits at S3's prices, by op."""
    per_visit = {op: n / visits for op, n in counted.items()}
    month_visits = PRICED_VIEWERS * PRICED_VISITS_A_DAY * DAYS
    usd = {op: per_visit[op] * month_visits * PRICE.get(op, 0.0) / 1000 for op in per_visit}
    return per_visit, usd


def first_pages(conn, metrics, tokens, visits):
    """The store's requests of `visits` first pages of each viewer."""
    before = store_requests(metrics)
    for _ in range(visits):
        for tok in tokens:
            send(conn, tok, "GET", route("recent", ws="bench"))
    return minus(store_requests(metrics), before)


def pins_part(conn, metrics, tokens, a):
    """Each viewer's first page before and after they pin the `a.pins` oldest items."""
    writer = token("producer", write=True)
    ids = [send(conn, writer, "POST", route("items", ws="bench"),
                {"key": f"job-{i}", "title": f"Job {i}", "status": "running"}, want=201)["id"]
           for i in range(ITEMS)]
    without = first_pages(conn, metrics, tokens, a.visits)
    for tok in tokens:
        for id in ids[:a.pins]:  # the first registered, the oldest: below the page's cap
            send(conn, tok, "PUT", route("pin", ws="bench", item=id), want=204)
    with_pins = first_pages(conn, metrics, tokens, a.visits)
    visits = len(tokens) * a.visits
    (without_per, without_usd), (with_per, with_usd) = priced(without, visits), priced(with_pins, visits)
    return {"items": ITEMS, "pins_each": a.pins, "visits": visits,
            "visit": f"GET {route('recent', ws='{ws}')}",
            "without": without, "with": with_pins,
            "without_per_visit": without_per, "with_per_visit": with_per,
            "usd_without": round(sum(without_usd.values()), 2), "usd_with": round(sum(with_usd.values()), 2)}


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--viewers", type=int, default=20)
    p.add_argument("--visits", type=int, default=10)
    p.add_argument("--pins", type=int, default=3)
    p.add_argument("--idle", type=float, default=5.0)
    a = p.parse_args(argv)
    store = tempfile.mkdtemp(prefix="pickup-bench-looks-")
    # No read cache: each visit reads the store, as one that no other visit shares.
    proc, addr, metrics = start_server(store, PICKUP_READ_CACHE="0s")
    try:
        host, port = addr.split(":")
        conn = http.client.HTTPConnection(host, int(port))
        tokens = [token(f"viewer-{i}") for i in range(a.viewers)]
        before = store_requests(metrics)
        started = time.monotonic()
        for _ in range(a.visits):
            for tok in tokens:
                seen = call(conn, tok, "looked", {"ws": "bench"})
                at = seen["at"] or "2026-01-01T00:00:00.000Z"
                # "Mark seen": the page's generated_at; here now, which the server keeps as now.
                now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
                call(conn, tok, "look", {"ws": "bench", "at": max(at, now)})
        visits_s = time.monotonic() - started
        counted = minus(store_requests(metrics), before)
        pins = pins_part(conn, metrics, tokens, a)
        after = store_requests(metrics)
        time.sleep(a.idle)
        idle = minus(store_requests(metrics), after)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(store, ignore_errors=True)
    visits = a.viewers * a.visits
    per_visit, month_usd = priced(counted, visits)
    result = {"viewers": a.viewers, "visits_each": a.visits, "visits": visits,
              "visit": f"POST {SERVER_FNS['looked']}, then POST {SERVER_FNS['look']}",
              "store": "file", "requests": counted, "per_visit": per_visit,
              "idle_s": a.idle, "idle_requests": idle, "visits_s": round(visits_s, 3), "pins": pins,
              "priced": {"viewers": PRICED_VIEWERS, "visits_a_day": PRICED_VISITS_A_DAY, "days": DAYS,
                         "prices_per_1000": PRICE, "usd_by_op": month_usd,
                         "usd": round(sum(month_usd.values()), 2)}}
    os.makedirs(os.path.join(ROOT, "target/bench"), exist_ok=True)
    with open(os.path.join(ROOT, "target/bench/looks.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
