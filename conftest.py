"""Repository-level pytest setup: pytester for the plugin's end-to-end tests."""

from __future__ import annotations

pytest_plugins = ["pytester"]
