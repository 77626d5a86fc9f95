"""HTTP serving: `app.create_app(agent)` is a FastAPI app with /v1/ask, /v1/ask/stream (SSE), an OpenAI-compatible
/v1/chat/completions and /healthz; `python cli.py serve` runs it."""
