"""Fixtures shared by the test files: the `rlvr` binary the Rust tests built."""

import os

import pytest

from test_verify_fixtures import rlvr_binary


@pytest.fixture(scope="module")
def binary():
    """The `rlvr` binary (RLVR_BIN, else the workspace's debug build); a failure under CI."""
    b = rlvr_binary()
    if b is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no rlvr binary (build it with `cargo build -p rlvr-cli` or set RLVR_BIN)")
        pytest.skip("no rlvr binary: build it with `cargo build -p rlvr-cli` or set RLVR_BIN")
    return b
