"""`python cli.py llm`: replies, JSON-schema replies, and one-line errors with exit codes."""
from __future__ import annotations

import json
import os

import pytest

from frames_agent import cli
from frames_agent.agent.llm import weights
from tests.agent.llm.providers.test_openai_compat import FakeOpenAI, completion

SECRET = "sk-cli-SECRET-abcdef0123456789"


@pytest.fixture
def env(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    return monkeypatch


@pytest.fixture
def fake():
    server = FakeOpenAI()
    yield server
    server.close()


def run(capsys, *argv):
    code = cli.main(["llm", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_plain_prompt(env, fake, capsys):
    fake.add(200, completion("Paris", 8, 1))
    code, out, err = run(capsys, "capital of France?", "--model", "openai:m", "--base-url", fake.url)
    assert code == 0 and out.strip() == "Paris"
    assert "8 prompt + 1 completion tokens" in err


def test_json_schema_prints_validated_json(env, fake, capsys, tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "required": ["queries"], "properties": {
        "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2}}}))
    fake.add(200, completion('```json\n{"queries": ["a", "b", "c"]}\n```'))
    code, out, err = run(capsys, "q", "--model", "openai:m", "--base-url", fake.url, "--json-schema", str(schema))
    assert code == 0 and json.loads(out) == {"queries": ["a", "b"]}
    assert "repaired" in err and "truncated 'queries' to 2" in err
    assert fake.requests[0]["response_format"]["json_schema"]["schema"]["properties"]["queries"]["maxItems"] == 2
    fake.add(200, completion("no json here"))
    code, out, err = run(capsys, "q2", "--model", "openai:m", "--base-url", fake.url, "--json-schema", str(schema))
    assert code == 1 and out.strip() == "no json here" and "does not match the schema" in err


def test_cache_is_on_by_default_and_no_cache_bypasses(env, fake, capsys):
    fake.add(200, completion("one")).add(200, completion("two"))
    base = ["same prompt", "--model", "openai:m", "--base-url", fake.url]
    assert run(capsys, *base)[1].strip() == "one"
    code, out, err = run(capsys, *base)
    assert out.strip() == "one" and "(cached)" in err
    assert run(capsys, *base, "--no-cache")[1].strip() == "two"


@pytest.mark.parametrize("argv,message", [
    (["x", "--model", "claude:opus"], "unknown model provider"),
    (["x", "--model", "openai:gpt-4o-mini"], "set OPENAI_API_KEY"),
    (["x", "--model", "gemini:gemini-1.5-pro"], "set GEMINI_API_KEY (or GOOGLE_API_KEY)"),
    pytest.param(["x", "--model", "local:gpt-5"], "unknown local model", marks=pytest.mark.local),
    (["x", "--model", "local:smollm2", "--base-url", "http://x/v1"], "--base-url applies to openai"),
    (["x", "--model", "openai:m", "--base-url", "ftp://x"], "must start with http"),
    (["x", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--no-cache"], "cannot reach http://127.0.0.1:9/v1"),
    (["x", "--json-schema", "/nonexistent/schema.json"], "cannot read schema"),
])
def test_bad_input_is_one_line_exit_2(env, capsys, argv, message):
    if "gpt-4o-mini" not in argv[2]:  # that case is about the key being absent
        env.setenv("OPENAI_API_KEY", SECRET)
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert SECRET not in out + err


def test_rejected_key_is_never_printed(env, fake, capsys):
    env.setenv("OPENAI_API_KEY", SECRET)
    fake.add(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    code, out, err = run(capsys, "x", "--model", "openai:m", "--base-url", fake.url, "--no-cache")
    assert code == 2 and "rejected the API key" in err and SECRET not in out + err
    cache_files = [os.path.join(d, f) for d, _, fs in os.walk(os.environ["FRAMES_AGENT_CACHE"]) for f in fs]
    assert all(SECRET.encode() not in open(f, "rb").read() for f in cache_files)


@pytest.mark.local
def test_missing_weight_parts_and_corrupt_gguf(env, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(weights, "qwen_part_paths", lambda: [None] * 22)
    code, _, err = run(capsys, "x")  # the default model
    assert code == 2 and "22 of 22 weight parts missing" in err and "frames-agent[local]" in err
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 4096)
    code, _, err = run(capsys, "x", "--model", f"local:{bad}", "--no-cache")
    assert code == 2 and "corrupt or truncated GGUF" in err and err.count("\n") == 1
