"""The wire contract's names for the scripts: the routes and server functions they call and the
live stream's page event, from public/contract.json, which app/tests/contract_js.rs generates from
app/src/contract/ (cargo test fails while it differs)."""

import json
from pathlib import Path

_CONTRACT = json.loads((Path(__file__).resolve().parent.parent / "public" / "contract.json").read_text())
SERVER_FNS = _CONTRACT["server_fns"]
PAGE_EVENT = _CONTRACT["live_events"]["page"]


def route(name, ws="", item=""):
    """A REST route of the contract (`items`, `item`, `recent`, `pin`, `live`, `healthz`, `readyz`)
    with its workspace and item id filled in (names of URL-safe characters only)."""
    return _CONTRACT["routes"][name].replace("{ws}", ws).replace("{id}", item)
