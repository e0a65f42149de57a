"""A service made from jig's python-service template."""

from app.main import health

__all__ = ["health"]
