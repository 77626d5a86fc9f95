"""Text no encoder takes becomes valid: a lone surrogate is U+FFFD, a split pair joined, the rest unchanged."""
from __future__ import annotations

import json

from frames_agent.core.terminal import valid_data, valid_text


def test_lone_surrogates_become_the_replacement_character():
    assert valid_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert valid_text("\ud83d\ude00") == "\U0001f600" and valid_text("plain é") == "plain é"
    parsed = json.loads('{"k\\ud800": ["v\\udc00", 1, {"x": "\\ud800"}]}')
    assert valid_data(parsed) == {"k\ufffd": ["v\ufffd", 1, {"x": "\ufffd"}]}
    json.dumps(valid_data(parsed), ensure_ascii=False).encode("utf-8")

