import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def pytest_configure(config):
    # The sandbox puts this interpreter's bin dir first on PATH: make sure it has pytest.
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
