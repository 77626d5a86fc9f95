"""A pydantic model from a JSON schema file (the `llm --json-schema` flag), for the common subset."""
from __future__ import annotations

import json
from pathlib import Path
from types import GenericAlias
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

from frames_agent.agent.llm.errors import LLMError

SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


class SchemaFileError(LLMError):
    """The JSON schema file is unreadable or uses constructs we do not translate."""


def load_schema_model(path: Path) -> type[BaseModel]:
    """The pydantic model a JSON schema file describes (top level must be an object)."""
    try:
        schema = json.loads(Path(path).read_text())
    except OSError as exc:
        raise SchemaFileError(f"cannot read schema {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SchemaFileError(f"schema {path} is not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(schema, dict) or "properties" not in schema:
        raise SchemaFileError(f"schema {path}: the top level must be an object with properties")
    return schema_model(schema, schema.get("title") or "Reply")


def schema_model(schema: dict, name: str, defs: dict | None = None) -> type[BaseModel]:
    """A pydantic model for an object schema."""
    defs = schema.get("$defs", schema.get("definitions", {})) if defs is None else defs
    required = set(schema.get("required", []))
    fields: dict[str, Any] = {}
    for key, sub in schema.get("properties", {}).items():
        kind = _type(sub, f"{name}_{key}", defs)
        info = {"description": sub.get("description")} if sub.get("description") else {}
        bounds = {k2: sub[k1] for k1, k2 in (("minItems", "min_length"), ("maxItems", "max_length"),
                                              ("minLength", "min_length"), ("maxLength", "max_length")) if k1 in sub}
        if key in required:
            fields[key] = (kind, Field(..., **info, **bounds))
        else:
            fields[key] = (Optional[kind], Field(None, **info, **bounds))
    extra: Literal["allow", "forbid"] = "allow" if schema.get("additionalProperties", True) is not False else "forbid"
    return create_model(name, __config__=ConfigDict(extra=extra), **fields)


def _type(sub: dict, name: str, defs: dict) -> Any:
    if "$ref" in sub:
        return _type(defs[sub["$ref"].split("/")[-1]], name, defs)
    if "enum" in sub:
        return Literal[tuple(sub["enum"])]
    options = sub.get("anyOf") or sub.get("oneOf")
    if options:
        real = [o for o in options if o.get("type") != "null"]
        if len(real) != 1:
            raise SchemaFileError(f"schema: {name}: unions other than 'X or null' are not supported")
        return Optional[_type(real[0], name, defs)]
    kind = sub.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        inner = _type({**sub, "type": real[0] if real else "string"}, name, defs)
        return Optional[inner] if "null" in kind else inner
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "array":
        return GenericAlias(list, _type(sub.get("items", {}), name, defs)) if sub.get("items") else list[Any]
    if kind == "object" or "properties" in sub:
        return schema_model(sub, name, defs) if "properties" in sub else dict[str, Any]
    if kind is None:
        return Any
    raise SchemaFileError(f"schema: {name}: type {kind!r} is not supported")
