"""Chat-model providers behind `provider:model` specs: `local:` (llama.cpp), `openai:` (any OpenAI-compatible
server) and `gemini:`. Users resolve them through `agent.llm.resolve_model`; each module here is imported lazily."""
