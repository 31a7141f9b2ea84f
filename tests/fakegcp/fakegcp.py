#!/usr/bin/python3
"""fakegcp: a stateful simulation of the Google Cloud APIs gpuqd uses.

Start:  /usr/bin/python3 tests/fakegcp/fakegcp.py --port 0 --state-dir DIR
        [--speed F] [--clock-origin T] [--project P]
        [--service-account-pubkey EMAIL=PATH]...
The first line on stdout is the base URL.  Every API lives under that one
URL with Google's own paths (doc/DESIGN.md "The simulated Google Cloud"):

  POST /token                              OAuth token endpoint (H.3)
  GET  /computeMetadata/v1/...             metadata server (H.3)
  /compute/v1/projects/{p}/...             Compute Engine (A, C)
  /v1/projects/{p}/locations/{r}/jobs      Cloud Batch (D)
  /v1/projects/{p}/locations/{r}/customJobs Vertex AI (E)
  /v1/projects/{p}/locations/global/services/{s}/quotaInfos  Cloud Quotas (B)
  /v1/services[/{id}/skus]                 Cloud Billing Catalog (F)
  /storage/v1/b/{b}/o..., /upload/storage/v1/b/{b}/o  Cloud Storage (G)
  /v1/projects/{p}/services/{s}            Service Usage (M)
  /v1/projects/-/serviceAccounts/{email}   IAM (M)
  /v3/projects/{p}                         Resource Manager (M)
  /_fake/...                               control API (README.md)

Letters refer to sections of /work/shared/gcp/API-NOTES.md.  Requests are
checked against the discovery schemas (fakegcp_schema.py); resources move
through their states on a simulated clock (fakegcp_sim.py).  One module
per API: fakegcp_compute, _batch, _vertex, _cloudquotas, _billing,
_storage, _oauth (token, metadata) and _control (/_fake/...);
fakegcp_server.py is the HTTP front end and fakegcp_state.py the shared
state (README.md "Files").  This file only starts the server.
"""
import argparse
import os
import signal
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fakegcp_jwt as jwt                               # noqa: E402
from fakegcp_control import Control                     # noqa: E402
from fakegcp_server import Handler, Server, build_routes  # noqa: E402
from fakegcp_state import Fake                          # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--project", default="gpuq-demo")
    # Real epoch seconds where simulated time equals real time, shared
    # with gpuqd's [daemon] clock_origin (doc/DESIGN.md "Simulated time").
    ap.add_argument("--clock-origin", type=float, default=None)
    ap.add_argument("--service-account-pubkey", action="append", default=[],
                    metavar="EMAIL=PATH")
    args = ap.parse_args(argv)
    os.makedirs(args.state_dir, exist_ok=True)
    fake = Fake(args.state_dir, args.speed, args.project, args.clock_origin)
    for spec in args.service_account_pubkey:
        email, _, pth = spec.partition("=")
        with open(pth) as fh:
            fake.sa_keys[email] = jwt.parse_rsa_public_pem(fh.read())
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.fake = fake
    srv.url = "http://127.0.0.1:%d" % srv.server_address[1]
    srv.routes = build_routes(fake)
    srv.control = Control(fake, srv)
    stop = threading.Event()

    # A tick every 0.1 s, faster when the clock is fast: at most 10
    # simulated seconds a tick, at most 200 ticks a second.
    period = max(0.005, min(0.1, 10.0 / max(args.speed, 1.0)))

    def ticker():
        while not stop.wait(period):
            try:
                fake.tick()
            except Exception:   # never let the clock thread die silently
                import traceback
                fake.log("TICK ERROR %s" % traceback.format_exc())

    threading.Thread(target=ticker, daemon=True).start()

    def on_signal(signum, frame):
        stop.set()
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write(srv.url + "\n")
    sys.stdout.flush()
    fake.log("fakegcp listening on %s (speed %g, project %s)" % (
        srv.url, args.speed, args.project))
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
