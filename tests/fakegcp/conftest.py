"""pytest fixtures for the fakegcp suite. The helpers live in
fakegcp_fixtures.py, so test files import them from there: a module named
"conftest" would clash with tests/integration/conftest.py when both suites
run at once."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakegcp_fixtures import *  # noqa: E402,F401,F403
