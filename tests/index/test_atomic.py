"""The build lock: an index home that cannot be written is a one-line error, not an OSError."""
from __future__ import annotations

import pytest

from frames_agent.index.build import build_lock
from frames_agent.index.corpus import CorpusError


def test_unwritable_index_home_is_a_corpus_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(CorpusError, match=r"cannot write indexes under .*file/indexes .*FRAMES_AGENT_INDEXES") as err:
        with build_lock(blocker / "indexes" / "default"):
            pass
    assert "\n" not in str(err.value)


def test_lock_creates_the_index_home(tmp_path):
    with build_lock(tmp_path / "home" / "ix"):
        assert (tmp_path / "home" / ".ix.lock").exists()
