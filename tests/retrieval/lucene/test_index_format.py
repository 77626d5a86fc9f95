"""An index another Lucene major version wrote (pyserini 1.6 on 3.11, 2.x from 3.12) asks for a rebuild in one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from frames_agent.retrieval.lucene.searcher import open_error

TOO_NEW = ("org.apache.lucene.index.IndexFormatTooNewException: Format version is not supported (resource "
           "BufferedChecksumIndexInput(segments_1)): 10 (needs to be between 7 and 9)")
TOO_OLD = "org.apache.lucene.index.IndexFormatTooOldException: Format version is not supported: 6"
CODEC = ("java.lang.IllegalArgumentException: An SPI class of type org.apache.lucene.codecs.Codec with name "
         "'Lucene104' does not exist.")


@pytest.mark.parametrize("error, which", [(TOO_NEW, "newer"), (TOO_OLD, "older"), (CODEC, "newer")])
def test_another_lucene_version_asks_for_a_rebuild_in_one_line(error, which):
    message = open_error(Path("/data/wiki"), error)
    assert message.startswith(f"index /data/wiki was written by a {which} Lucene") and "index build" in message
    assert "\n" not in message and "Python 3.11" in message


def test_other_failures_say_corrupt():
    assert open_error(Path("/x"), "java.io.IOException: read past EOF").startswith("corrupt index /x")
