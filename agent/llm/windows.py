"""Context windows of chat models: the LangChain model profile where the integration has one, else known names."""
from __future__ import annotations

from langchain_core.language_models import BaseChatModel

# Input tokens by model-name prefix (longest prefix wins), from the providers' model pages; used when a model
# object carries no LangChain profile and for spec strings before a model is built.
KNOWN_WINDOWS: dict[str, int] = {
    "gemini-1.5-pro": 2_097_152, "gemini": 1_048_576,
    "gpt-4.1": 1_047_576, "gpt-5": 400_000, "gpt-4o": 128_000, "gpt-4-turbo": 128_000, "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385, "o1": 200_000, "o3": 200_000, "o4": 200_000,
    "claude": 200_000, "mistral-large": 128_000, "mistral-small": 32_000, "mixtral": 32_000,
    "llama3.1": 128_000, "llama-3.1": 128_000, "llama3.2": 128_000, "llama-3.3": 128_000, "llama3.3": 128_000,
    "qwen2.5": 32_768, "deepseek": 64_000, "command-r": 128_000, "grok": 131_072,
}

# Servers that run a model with their own context size, whatever the model could read: Ollama's default num_ctx
# is 4,096 tokens and it silently drops the start of longer prompts (the instructions), so budgets follow the server.
SERVER_WINDOWS: dict[str, int] = {"ollama": 4_096}


def window_for_name(name: str) -> int | None:
    """The context window of a model name (any 'models/' or 'org/' prefix ignored), if known."""
    key = str(name or "").strip().lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in KNOWN_WINDOWS if key.startswith(prefix)]
    return KNOWN_WINDOWS[max(matches, key=len)] if matches else None


def model_window(model: BaseChatModel) -> int | None:
    """The context window of a model object: its LangChain profile's max_input_tokens, else its name, if known."""
    num_ctx = getattr(model, "num_ctx", None)  # ChatOllama: the context the server will actually use
    if isinstance(num_ctx, int) and num_ctx > 0:
        return num_ctx
    profile = getattr(model, "profile", None)
    if isinstance(profile, dict) and isinstance(profile.get("max_input_tokens"), int):
        return profile["max_input_tokens"]
    for attribute in ("model_name", "model", "model_id"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and (window := window_for_name(name)):
            return window
    return None
