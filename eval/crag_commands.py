"""CLI subcommands of this package (placeholder until its issue lands)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the CLI."""
