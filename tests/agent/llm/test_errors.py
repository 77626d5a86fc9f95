"""Errors of the LLM layer never carry credentials, wherever they hide in a URL."""
from __future__ import annotations

import pytest

from frames_agent.agent.llm.errors import redact_url


@pytest.mark.parametrize("url, shown", [
    ("http://user:sk-abc123456@host:8000/v1", "http://***@host:8000/v1"),
    ("https://host/v1?key=AIza123&deployment=x", "https://host/v1?key=***&deployment=x"),
    ("https://host/v1?api-key=s3cret&token=t0k", "https://host/v1?api-key=***&token=***"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    (None, None),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_a_malformed_url_still_loses_key_shaped_text():
    assert "sk-abcdef123456" not in redact_url("http://[::1:sk-abcdef123456@host/")


def test_redact_masks_urls_inside_a_message():
    from frames_agent.agent.llm.errors import redact

    text = redact("ConnectError: http://ann:pw-123@host:1/v1?api_key=zz-top failed")
    assert "pw-123" not in text and "zz-top" not in text and "http://***@host:1/v1?api_key=***" in text
