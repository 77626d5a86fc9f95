"""local:<model> — GGUF weights served by llama.cpp (xllamacpp) in-process, spoken to as an OpenAI server."""
from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from frames_agent.agent.llm.errors import MissingPackageError, WeightsError
from frames_agent.agent.llm.providers.openai_compat import PLACEHOLDER_KEY, OpenAICompatChat

DEFAULT_CTX = 8192
# A hard server-side cap, so a small model that never stops cannot fill the whole context.
MAX_PREDICT = 2048


def check_runtime() -> None:
    """A one-line install error when the llama.cpp runtime (the `local` extra) is missing."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        raise MissingPackageError("local models need the llama.cpp runtime (xllamacpp): pip install 'frames-agent[local]'")


def cores() -> int:
    """Cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def busy_cores(sample: float = 0.25) -> float:
    """Cores kept busy by other work now: /proc/stat sampled over `sample` seconds, else the 1-minute load average."""
    def ticks() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)  # total, idle + iowait

    try:
        total0, idle0 = ticks()
        time.sleep(sample)
        total1, idle1 = ticks()
    except (OSError, ValueError, IndexError):
        try:
            return float(os.getloadavg()[0])
        except (OSError, AttributeError):
            return 0.0
    spent = total1 - total0
    return (1 - (idle1 - idle0) / spent) * cores() if spent > 0 else 0.0


FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}


@dataclass(frozen=True)
class RuntimeSettings:
    """How llama.cpp runs a local model: threads, flash attention, batch sizes and context (one slot)."""

    threads: int | None = None  # generation threads (None: chosen when the server starts)
    batch_threads: int | None = None  # prompt-reading threads (None: chosen when the server starts)
    flash_attn: str = "off"  # on CPUs flash attention tends to slow prompt reading
    n_batch: int = 2048
    n_ubatch: int = 512
    n_ctx: int = DEFAULT_CTX

    def resolved_threads(self) -> tuple[int, int]:
        """(generation, prompt) threads: as set, else FRAMES_AGENT_LLM_THREADS for both, else the idle cores and all."""
        if self.threads:
            return self.threads, self.batch_threads or self.threads
        env = os.environ.get("FRAMES_AGENT_LLM_THREADS", "")
        if env.isdigit() and int(env) > 0:
            return int(env), self.batch_threads or int(env)
        idle = int(cores() - busy_cores() + 0.5)
        return max(1, min(cores(), idle)), self.batch_threads or cores()


class LocalRuntime:
    """A llama.cpp OpenAI-compatible server on 127.0.0.1 (free port), started on first use, stopped at exit."""

    def __init__(self, model_path: Path, *, name: str, settings: RuntimeSettings | None = None) -> None:
        self.model_path, self.name = Path(model_path), name
        self.settings = settings or RuntimeSettings()
        self._lock = threading.Lock()
        self._server: Any = None
        self._address: str | None = None
        self.threads: tuple[int, int] | None = None  # (generation, prompt), once started
        atexit.register(self.close)

    @property
    def started(self) -> bool:
        """Whether the server is up."""
        return self._server is not None

    def server(self) -> Any:
        """The xllamacpp Server (for raw in-process calls, e.g. benchmarks), started if needed."""
        self.base_url()
        return self._server

    def base_url(self) -> str:
        """The server's OpenAI base URL (…/v1), starting it first if needed."""
        with self._lock:
            if self._server is None:
                self._server, self._address = self._start()
            return f"{self._address}/v1"

    def _params(self, xllamacpp: Any) -> Any:
        cfg, params = self.settings, xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = self.name
        params.hostnames, params.port = ["127.0.0.1"], 0  # port 0: the OS picks a free one
        params.n_ctx, params.n_parallel, params.n_predict = cfg.n_ctx, 1, MAX_PREDICT
        self.threads = cfg.resolved_threads()  # chosen once, when the server starts
        params.cpuparams.n_threads, params.cpuparams_batch.n_threads = self.threads
        params.flash_attn_type = xllamacpp.llama_flash_attn_type(FLASH_ATTN[cfg.flash_attn])
        params.n_batch, params.n_ubatch = cfg.n_batch, cfg.n_ubatch
        # Steps of one question share their prompt's head: the server keeps its KV and reads only the new tail.
        params.cache_prompt = True
        params.verbosity = -1  # llama.cpp's log lines would drown the CLI's output
        return params

    def _start(self) -> tuple[Any, str]:
        check_runtime()
        import xllamacpp

        try:
            server = xllamacpp.Server(self._params(xllamacpp))
        except RuntimeError:
            raise WeightsError(f"{self.name}: llama.cpp could not load {self.model_path} "
                               "(corrupt or truncated GGUF, or not enough memory)") from None
        return server, server.listening_address

    def close(self) -> None:
        """Stop the server (idempotent)."""
        with self._lock:
            server, self._server = self._server, None
        del server  # xllamacpp stops its threads in the destructor


class RuntimePool:
    """Runtimes by (model file, settings): one loaded copy of a model per process and configuration."""

    def __init__(self, settings: RuntimeSettings | None = None) -> None:
        self.settings = settings  # None: RuntimeSettings()
        self._lock = threading.Lock()
        self._runtimes: dict[tuple, LocalRuntime] = {}

    def get(self, model_path: Path, *, name: str, settings: RuntimeSettings | None = None) -> LocalRuntime:
        """The shared runtime for this model and settings (not started yet if new)."""
        settings = settings or self.settings or RuntimeSettings()
        # Unset threads are chosen at start (by the cores idle then); FRAMES_AGENT_LLM_THREADS sets them.
        key = (str(Path(model_path).resolve()), settings, os.environ.get("FRAMES_AGENT_LLM_THREADS", ""))
        with self._lock:
            if key not in self._runtimes:
                self._runtimes[key] = LocalRuntime(model_path, name=name, settings=settings)
            return self._runtimes[key]

    def close(self) -> None:
        """Stop every runtime."""
        with self._lock:
            runtimes, self._runtimes = list(self._runtimes.values()), {}
        for runtime in runtimes:
            runtime.close()


# Every resolve_model("local:…") of a process shares one loaded model (~1 GB); pass your own RuntimePool to isolate.
SHARED_POOL = RuntimePool()


class LocalChat(OpenAICompatChat):
    """The local model as a ChatOpenAI pointed at its in-process server (started on the first call)."""

    runtime: LocalRuntime | None = Field(default=None, exclude=True)  # None: the server at base_url

    def _ready(self) -> None:
        if self.runtime is None:
            return
        url = self.runtime.base_url()
        for client in (self.root_client, self.root_async_client):
            if client is not None and str(client.base_url).rstrip("/") != url:
                client.base_url = url


def make_local_chat(name: str, runtime: LocalRuntime, *, timeout: float = 600.0, max_retries: int = 0,
                    temperature: float = 0.0, max_tokens: int | None = 1024, seed: int = 0) -> LocalChat:
    """local:<name> served by runtime (greedy and seeded, so reruns repeat)."""
    # The URL is a placeholder until the runtime starts; a slow local call is not retried (it would double the wait).
    return LocalChat(model=name, spec=f"local:{name}", base_url="http://127.0.0.1:1/v1", api_key=PLACEHOLDER_KEY,
                     timeout=timeout, max_retries=max_retries, temperature=temperature, max_tokens=max_tokens,
                     seed=seed, stream_usage=True, legacy_max_tokens=True, runtime=runtime)

