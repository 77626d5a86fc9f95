"""The access log shows a request path's control characters escaped: a path cannot forge lines or drive a terminal."""
from __future__ import annotations

import logging

from fastapi.testclient import TestClient

from frames_agent.agent.serve import ServeSettings, create_app
from frames_agent.agent.serve.access import access_logger
from tests.agent.serve.conftest import scripted_agent


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_control_bytes_in_a_path_are_escaped():
    client = TestClient(create_app(scripted_agent(), ServeSettings()), base_url="http://127.0.0.1")
    lines, logger = Lines(), access_logger()
    logger.addHandler(lines)
    try:
        client.get("/v1/%1b%5b2J%0d%0a127.0.0.1%20%22GET%20/forged%22%20200%07")
    finally:
        logger.removeHandler(lines)
    line, = lines.lines
    assert '"GET /v1/\\x1b[2J\\x0d\\x0a127.0.0.1 "GET /forged" 200\\x07" 404' in line
    assert not any(ord(c) < 0x20 for c in line)
