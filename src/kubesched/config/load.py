"""Reading a configuration file (YAML or JSON) into a validated configuration.

The YAML reader is strict where kube-scheduler's is: a key written twice in one mapping is
an error. It also keeps date-like scalars as strings, because Go's YAML-to-JSON step does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kubesched.config.errors import ConfigError, FieldError
from kubesched.config.gofmt import go_quote
from kubesched.config.parse import parse_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.objects import jsontext

__all__ = ["load_config", "loads_config", "read_document"]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that records repeated keys and does not make dates of strings."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.repeated_keys: list[FieldError] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            # Merge keys ("<<") may legitimately repeat; only plain scalar keys are checked.
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                continue
            if key_node.value in seen:
                mark = key_node.start_mark
                where = f"line {mark.line + 1}, column {mark.column + 1}"
                detail = f"{where}: key {go_quote(key_node.value)} already set in map"
                self.repeated_keys.append(FieldError.decode("", detail))
            seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _read_json(text: str) -> tuple[Any, list[FieldError]]:
    repeated: list[FieldError] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        for key in sorted({k for k in keys if keys.count(k) > 1}):
            repeated.append(FieldError.decode("", f"key {go_quote(key)} already set in map"))
        return dict(items)

    return jsontext.loads(text, jsontext.decoder(object_pairs_hook=pairs)), repeated


def _read_yaml(text: str, source: str) -> tuple[Any, list[FieldError]]:
    try:
        # The reader refuses control characters (a NUL byte) as it is built.
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as exc:
        detail = f"invalid YAML: position {exc.position}: {_unacceptable(exc)}"
        raise ConfigError(source, [FieldError.decode("", detail)]) from exc
    try:
        data = loader.get_single_data()
        jsontext.check_yaml(data)
        return data, loader.repeated_keys
    except RecursionError:
        detail = f"invalid YAML: exceeded max depth of {jsontext.MAX_DEPTH}"
        raise ConfigError(source, [FieldError.decode("", detail)]) from None
    except jsontext.JSONTextError as exc:  # too deep, or aliases past the limit
        raise ConfigError(source, [FieldError.decode("", f"invalid YAML: {exc}")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        detail = f"invalid YAML: {where}{exc.problem or exc.context or 'syntax error'}"
        raise ConfigError(source, [FieldError.decode("", detail)]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(source, [FieldError.decode("", f"invalid YAML: {exc}")]) from exc
    finally:
        loader.dispose()


def _unacceptable(exc: yaml.reader.ReaderError) -> str:
    # ReaderError's own text spans two lines; errors here are one line each.
    char = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return f"unacceptable character #x{char:04x}: {exc.reason}"


def read_document(text: str, source: str, *, is_json: bool = False) -> tuple[Any, list[FieldError]]:
    """The data in ``text`` and any repeated-key errors.

    ``text`` is JSON when ``is_json`` says so; otherwise it is YAML, unless it looks like
    JSON (starts with "{"), as kube-scheduler's decoder also guesses. Tab-indented JSON is
    not valid YAML, so the guess matters. Raises ``ConfigError`` when ``text`` cannot be
    read at all; the one error then says where, by line and column.
    """
    if is_json:
        try:
            return _read_json(text)
        except json.JSONDecodeError as exc:
            detail = f"invalid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}"
            raise ConfigError(source, [FieldError.decode("", detail)]) from exc
        except jsontext.JSONTextError as exc:
            raise ConfigError(source, [FieldError.decode("", f"invalid JSON: {exc}")]) from exc
    if text.lstrip().startswith("{"):
        try:
            return _read_json(text)
        except json.JSONDecodeError:
            pass  # a YAML flow mapping, most likely: let the YAML reader judge
        except jsontext.JSONTextError as exc:
            raise ConfigError(source, [FieldError.decode("", f"invalid JSON: {exc}")]) from exc
    return _read_yaml(text, source)


def loads_config(
    text: str, source: str = "", *, is_json: bool = False
) -> KubeSchedulerConfiguration:
    """The configuration in ``text``; raises ``ConfigError`` listing every problem."""
    data, errors = read_document(text, source, is_json=is_json)
    config, problems = parse_config(data, source)
    errors += problems
    if errors:
        raise ConfigError(source, errors)
    return config


def load_config(path: str | Path) -> KubeSchedulerConfiguration:
    """The configuration in the YAML or JSON file ``path``.

    Raises ``ConfigError`` listing every problem found, each prefixed with the file name.
    """
    return loads_config(read_file(path), str(path), is_json=Path(path).suffix.lower() == ".json")


def read_file(path: str | Path) -> str:
    """The text of a configuration file; a ConfigError naming the file if unreadable."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(
            str(path), [FieldError.decode("", f"cannot read the file: {reason}")]
        ) from exc
