"""Integration tests across packages: they need the whole workspace (uv sync)."""
