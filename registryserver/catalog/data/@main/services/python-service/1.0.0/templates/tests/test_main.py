"""Tests of the service; run with pytest (or python -m unittest)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from app.main import health  # noqa: E402


class HealthTest(unittest.TestCase):
    def test_health_is_ok(self) -> None:
        self.assertEqual(health(), {"status": "ok"})


if __name__ == "__main__":
    unittest.main()
