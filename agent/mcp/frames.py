"""JSON-RPC frames from an MCP client, screened before the SDK reads them: a frame over the size or nesting bounds,
not JSON, holding a lone surrogate escape (not text), or a request of the wrong shape gets a JSON-RPC error reply
with its id (the SDK drops such a frame without a reply, and the client waits forever); a well-formed frame passes
unchanged."""
from __future__ import annotations

import itertools
import json
import re
from typing import Any

from frames_agent.core.bounded import DepthGuard, JSONOutOfBounds, check_json
from frames_agent.core.terminal import valid_data

# Far above any request this server takes (a question is at most 4,000 characters), so an oversized tool argument
# still reaches the tool and gets the limits' own message; beyond it a frame is refused unread.
MAX_FRAME_BYTES = 4 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
# A frame has one id; a not-JSON frame with a million nested "id" decoys is answered with id null, not a million looks.
MAX_ID_MEMBERS = 1000
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def top_level_id(frame: bytes) -> Any:
    """The id of a frame too deep to parse: the first `"id": <number or string>` member of the outer object, among
    the first MAX_ID_MEMBERS `"id"` members (None past them)."""
    guard, read = DepthGuard(max_depth=MAX_FRAME_BYTES), 0
    for found in itertools.islice(_ID.finditer(frame[:MAX_FRAME_BYTES]), MAX_ID_MEMBERS):
        guard.feed(frame[read:found.start()])  # one pass over the frame, however many members it has
        read = found.start()
        if guard.depth == 1 and not guard._in_string:
            try:
                return json.loads(found.group(1))
            except ValueError:
                return None
    return None


def _shape_error(message: Any) -> dict[str, Any] | None:
    """The error reply for a parsed frame the SDK cannot read; None for a notification or a response (no reply)."""
    if not isinstance(message, dict):
        return error_reply(None, INVALID_REQUEST, "Invalid Request: a frame must be one JSON object")
    if "method" not in message:
        return None if "result" in message or "error" in message else error_reply(
            message.get("id") if _valid_id(message.get("id")) else None, INVALID_REQUEST, "Invalid Request")
    if "id" not in message:
        return None  # a notification is never answered, even when malformed
    request_id = message["id"] if _valid_id(message["id"]) else None
    if not isinstance(message.get("method"), str):
        return error_reply(request_id, INVALID_REQUEST, "Invalid Request: method must be a string")
    if "params" in message and not isinstance(message["params"], dict):
        return error_reply(request_id, INVALID_PARAMS, "Invalid params: params must be an object")
    return error_reply(request_id, INVALID_REQUEST, "Invalid Request")


def screen(frame: bytes, sdk_accepts: Any = None) -> tuple[bytes | None, dict[str, Any] | None]:
    """(the frame to hand to the SDK or None, the error reply to send or None) for one line from the client;
    sdk_accepts(message) says whether the SDK can read a parsed message (default: it can)."""
    if not frame.strip():
        return None, None
    try:
        message = json.loads(check_json(frame, max_bytes=MAX_FRAME_BYTES))
    except JSONOutOfBounds as exc:
        return None, error_reply(top_level_id(frame), INVALID_REQUEST, f"Invalid Request: {exc}")
    except (ValueError, RecursionError):  # not JSON, or a number past Python's 4,300 digits
        return None, error_reply(top_level_id(frame), PARSE_ERROR, "Parse error: the frame is not JSON")
    if valid_data(message) != message:  # the SDK's parser refuses the escape and drops the frame unanswered
        request_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request: a lone surrogate escape "
                                 "(\\ud800-\\udfff) is not text")
    if isinstance(message, dict) and "method" in message and "id" in message and not _valid_id(message["id"]):
        # true, 9.5 or null: the SDK would coerce or drop it, and the client could not match any answer
        return None, error_reply(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if sdk_accepts is None or sdk_accepts(message):
        return frame, None
    return None, _shape_error(message)
