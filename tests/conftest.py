"""Integration tests across packages: they need the whole workspace (uv sync)."""

import pytest


@pytest.fixture
def linear_policy_file():
    """`(path, metadata) -> path`: a zero linear policy carrying `metadata`."""
    from mjlab.deploy.testing import write_linear_policy

    return lambda path, metadata: write_linear_policy(path, metadata=metadata)
