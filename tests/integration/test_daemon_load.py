"""gpuqd under load: pipelined submits on one connection, many clients
at once, and crashes (SIGKILL) in the middle of a storm of submits: no
acknowledged job may be lost."""

import random
import threading
import time

from daemonutil import daemon, submit  # noqa: F401 (fixture)


def test_daemon_10000_pipelined_submits_survive_a_restart(daemon):
    d = daemon()
    n = 10000
    with d.connect() as c:
        t0 = time.monotonic()
        replies = c.pipeline([submit(name="p%d" % i) for i in range(n)])
        elapsed = time.monotonic() - t0
    assert all(r["ok"] for r in replies), \
        [r for r in replies if not r["ok"]][:3]
    assert [r["id"] for r in replies] == list(range(1, n + 1))
    print(f"\n{n} pipelined submits acknowledged in {elapsed:.2f}s "
          f"({n / elapsed:.0f}/s, including the test's own JSON work)")
    # Group commit: far fewer transactions than submits.
    assert d.stop() == 0
    d.start()
    jobs = d.all_jobs()
    assert len(jobs) == n
    assert jobs[1]["name"] == "p0" and jobs[n]["name"] == "p%d" % (n - 1)


def test_daemon_200_concurrent_clients(daemon):
    d = daemon("[daemon]\nmax_connections_per_uid = 256\n")
    n, per = 200, 5
    barrier = threading.Barrier(n)
    results, errors = [], []

    def client(k):
        try:
            with d.connect(timeout=30) as c:
                barrier.wait(timeout=30)
                ids = []
                for i in range(per):
                    r = c.request(submit(name="c%d" % k))
                    assert r["ok"], r
                    ids.append(r["id"])
                assert c.request({"op": "ping"})["ok"]
                r = c.request({"op": "show", "id": ids[-1]})
                assert r["job"]["name"] == "c%d" % k
                results.append(ids)
        except Exception as e:       # reported below
            errors.append(repr(e))
    threads = [threading.Thread(target=client, args=(k,))
               for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    ids = sorted(i for r in results for i in r)
    assert ids == list(range(1, n * per + 1))
    assert len(d.all_jobs()) == n * per


def test_daemon_kill9_loses_no_acknowledged_job(daemon):
    d = daemon()
    rounds, writers = 20, 6
    total = last = 0
    for rnd in range(rounds):
        acked = []
        lock = threading.Lock()
        stop = threading.Event()

        def storm():
            try:
                with d.connect(timeout=10) as c:
                    buf = b""
                    batch = b"".join(
                        (b'{"op":"submit","job":{"image":"i",'
                         b'"accelerator":{"type":"nvidia-tesla-t4",'
                         b'"count":1}}}\n') for _ in range(50))
                    while not stop.is_set():
                        c.sock.sendall(batch)
                        got = 0
                        while got < 50:
                            chunk = c.sock.recv(65536)
                            if not chunk:
                                return
                            buf += chunk
                            *lines, buf = buf.split(b"\n")
                            for line in lines:
                                got += 1
                                if line.startswith(b'{"ok":true,"id":'):
                                    with lock:
                                        acked.append(int(line[16:-1]))
            except OSError:
                pass                 # the daemon died under us
        threads = [threading.Thread(target=storm) for _ in range(writers)]
        for t in threads:
            t.start()
        time.sleep(random.uniform(0.02, 0.15))
        d.kill9()
        stop.set()
        for t in threads:
            t.join()
        d.start()
        jobs = d.all_jobs(after=last)
        last = max(jobs, default=last)
        lost = [i for i in acked if i not in jobs]
        assert not lost, f"round {rnd}: {len(lost)} acknowledged jobs " \
            f"lost, e.g. {lost[:5]}"
        assert len(set(acked)) == len(acked)
        total += len(acked)
    assert total > rounds * 50      # the storms did submit
    print(f"\n{total} acknowledged submits over {rounds} crashes, "
          f"none lost")


def test_daemon_one_at_a_time_submits(daemon):
    """Round trips on one connection, each waiting for its commit."""
    d = daemon()
    n = 500
    with d.connect() as c:
        line = (b'{"op":"submit","job":{"image":"i","accelerator":'
                b'{"type":"nvidia-tesla-t4","count":1}}}\n')
        t0 = time.monotonic()
        for i in range(n):
            c.sock.sendall(line)
            assert c.recv_line().startswith(b'{"ok":true,"id":')
        elapsed = time.monotonic() - t0
    print(f"\n{n} one-at-a-time submits in {elapsed:.2f}s "
          f"({n / elapsed:.0f}/s)")
