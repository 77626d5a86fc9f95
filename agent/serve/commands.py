"""`python cli.py serve`: the agent over HTTP (JSON, server-sent events, OpenAI-compatible chat completions)."""
from __future__ import annotations

import argparse

from frames_agent.core.errors import validation_error


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `serve` subcommand."""
    from frames_agent.agent.commands import add_agent_flags
    from frames_agent.agent.limits import MAX_BODY_BYTES

    parser = sub.add_parser("serve", help="serve the agent over HTTP (/v1/ask, SSE, OpenAI-compatible chat)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--max-concurrency", type=int, default=4, help="questions in flight; more get 429 (default 4)")
    parser.add_argument("--max-body", type=int, default=MAX_BODY_BYTES,
                        help=f"largest request body in bytes (default {MAX_BODY_BYTES})")
    parser.add_argument("--request-timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds a client has to send a request's headers and body; slower or silent "
                             "connections are closed (default 30)")
    parser.add_argument("--shutdown-grace", type=float, default=None, metavar="SECONDS",
                        help="on SIGTERM, seconds replies in flight may take before they are cut off (default 10)")
    parser.add_argument("--allow-open", action="store_true",
                        help="serve a non-loopback address without FRAMES_AGENT_TOKEN (anyone who reaches it may ask)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="a browser origin allowed cross-origin requests, e.g. http://localhost:3000 (repeatable or "
                             "comma-separated; * allows any); requests from any other Origin get 403")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a name clients may give in the Host header besides the address served (repeatable or "
                             "comma-separated); any other Host gets 421 (DNS rebinding)")
    parser.add_argument("--no-access-log", dest="access_log", action="store_false",
                        help="no access-log line per request on stderr")
    parser.add_argument("--sources-in-content", action=argparse.BooleanOptionalAction, default=None,
                        help="chat completions list the top sources under the answer in the message content, where "
                             "clients such as LangChain's ChatOpenAI see them (default: on; always in `sources`)")
    add_agent_flags(parser, cache=False)  # --cache/--no-cache: a server answers afresh unless --cache
    parser.set_defaults(handler=run_serve)


def _listed(values: list[str]) -> list[str]:
    """Repeated and comma-separated flag values as one list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def run_serve(args: argparse.Namespace) -> int:
    """Bind the port, build the agent once, then serve it until interrupted."""
    from pydantic import ValidationError

    from frames_agent.agent.serve.app import create_app
    from frames_agent.agent.serve.connections import server_options
    from frames_agent.agent.serve.guard import ServeSettings, is_loopback
    from frames_agent.agent.settings import AgentSettings
    from frames_agent.core.errors import UsageError
    from frames_agent.core.sockets import bind, serve_on, url_of

    try:
        settings = ServeSettings.from_env(max_concurrency=args.max_concurrency, max_body_bytes=args.max_body,
                                          access_log=args.access_log, host=args.host,
                                          allow_hosts=_listed(args.allow_host), allow_origins=_listed(args.allow_origin),
                                          sources_in_content=args.sources_in_content,
                                          request_timeout=args.request_timeout, shutdown_grace=args.shutdown_grace)
    except ValidationError as exc:
        where, message = validation_error(exc)
        raise UsageError(f"--{where}: {message}".replace("max_body_bytes", "max-body").replace("_", "-")) from None
    if not is_loopback(args.host) and not settings.token and not args.allow_open:
        raise UsageError(f"refusing to serve {args.host} without a token: set FRAMES_AGENT_TOKEN (clients send "
                         "'Authorization: Bearer <token>') or pass --allow-open")
    agent = AgentSettings.from_flags(vars(args))  # bad flags fail before the port is bound
    with bind(args.host, args.port) as sock:  # first: a bad or busy port fails before the index and model load
        app = create_app(agent.build_agent(), settings)
        serve_on(app, sock, f"serving on {url_of(sock, args.host)} (POST /v1/ask, /v1/ask/stream, "
                 f"/v1/chat/completions, GET /v1/models; {'bearer token required' if settings.token else 'no token'}"
                 f"; LLM cache {'on' if agent.cache else 'off'})",
                 **server_options(settings.request_timeout, settings.shutdown_grace))
    return 0
