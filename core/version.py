"""The installed distribution's version, read from its package metadata."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("frames-agent")
except PackageNotFoundError:  # a checkout run without installing it: no metadata to read
    __version__ = "0+unknown"
