"""skipnames.py: a pytest plugin (tests/run-pytest loads it) that names
every skipped test at the end of the run, one "SKIP: NODEID<tab>REASON"
line each, so .ci/count can check skips against .ci/allowed-skips."""


def pytest_terminal_summary(terminalreporter):
    for rep in terminalreporter.stats.get("skipped", []):
        lr = rep.longrepr
        reason = lr[2] if isinstance(lr, tuple) and len(lr) == 3 else lr
        reason = str(reason).replace("Skipped: ", "", 1)
        terminalreporter.write_line(f"SKIP: {rep.nodeid}\t{reason}")
