"""HTTP serving: `create_app(agent)` is a FastAPI app with /v1/ask, /v1/ask/stream (SSE), an OpenAI-compatible
/v1/chat/completions and /healthz; `python cli.py serve` runs it.

    from agent.serve import ServeSettings, create_app
"""
from agent.serve.app import create_app
from agent.serve.guard import ServeSettings

__all__ = ["ServeSettings", "create_app"]
