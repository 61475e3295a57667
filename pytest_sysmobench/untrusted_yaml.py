"""YAML from files a user or a model wrote: safe types only, no aliases.

A few hundred bytes of nested aliases expand to gigabytes, and none of our files needs them.
"""

from __future__ import annotations

from typing import Any

import yaml


class AliasRefused(yaml.YAMLError):
    def __init__(self, line: int) -> None:
        super().__init__(f"YAML aliases are not allowed (line {line})")
        self.line = line


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise AliasRefused(self.peek_event().start_mark.line + 1)
        return super().compose_node(parent, index)


def load(text: str) -> Any:
    """Parsed YAML; raises yaml.YAMLError (AliasRefused for an alias) or RecursionError."""
    return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader without aliases
