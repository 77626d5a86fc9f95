"""HTTP serving: `create_app(agent)` is a FastAPI app with /v1/ask, /v1/ask/stream (SSE), an OpenAI-compatible
/v1/chat/completions and /healthz; `python cli.py serve` runs it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from frames_agent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from frames_agent.agent.serve.app import create_app
    from frames_agent.agent.serve.guard import ServeSettings

# Lazy: `cli.py --help` imports this package's commands module, which must not need the optional server packages.
_EXPORTS = {"create_app": "frames_agent.agent.serve.app", "ServeSettings": "frames_agent.agent.serve.guard"}
__all__ = ["ServeSettings", "create_app"]
__getattr__ = lazy_exports(__name__, _EXPORTS)
