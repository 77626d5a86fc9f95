"""hf: data with the hub unreachable: one quick line, no retry chatter, the library switches left as they were."""
from __future__ import annotations

import time

import pytest

from frames_agent.eval.errors import DataError
from frames_agent.eval.frames import datasets as hub


def test_unreachable_hub_fails_fast_and_quietly(monkeypatch, tmp_path, capfd):
    pytest.importorskip("datasets")
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HOME", str(tmp_path))  # no cached copy
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    before = constants.HF_HUB_OFFLINE
    started = time.monotonic()
    with pytest.raises(DataError, match="unreachable and no cached copy") as err:
        hub.hub_rows("google/frames-benchmark")
    assert time.monotonic() - started < 20 and "\n" not in str(err.value)
    assert "Retrying" not in capfd.readouterr().err
    assert before == constants.HF_HUB_OFFLINE


def test_probe_answers_false_for_a_closed_port(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    assert hub.hub_reachable(timeout=1.0) is False
