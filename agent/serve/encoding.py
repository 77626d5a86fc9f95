"""What the server sends is valid UTF-8 JSON whatever text reached the agent (every lone surrogate replaced)."""
from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

from frames_agent.core.terminal import valid_text


def json_text(data: Any) -> str:
    """data as JSON text any encoder takes."""
    return valid_text(json.dumps(data, ensure_ascii=False))


class TextJSONResponse(JSONResponse):
    """A JSONResponse whose body encodes whatever strings it holds (Starlette's raises UnicodeEncodeError)."""

    def render(self, content: Any) -> bytes:
        return valid_text(json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))).encode()
