"""The importer protocol: one small record per format, built-ins and plug-ins alike.

An `Importer` says whether it recognises a file (`detect`, given a `Sniff` of its first items) and reads it
(`read` → `ImportResult`: messages plus the account of what did not come in). `detect` returns True/False or
a score in (0, 1]: how surely the fields that define the format are there (True is 1.0). Every importer is
asked; the highest score wins, ties going to the earlier importer, and the runner-up is named (`claims`).
Built-in formats are listed in `BUILTIN`, in detection order: specific formats first, the generic
API-payload shapes last. Other packages add formats through the entry point group
`linn_playground.importers`; each entry point names an `Importer` (or a function returning one). Plug-ins
are tried after the specific built-ins and before the generic ones, so a plug-in cannot take a Claude Code
file but can claim what would pass for OpenAI chat.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from engine.importers._common import ImportResult, UnknownFormatError
from engine.importers._json import iter_json_array, iter_jsonl, load_json_document
from engine.safe_input import InputError

ENTRY_POINT_GROUP = "linn_playground.importers"
SAMPLE_ITEMS = 200
SAMPLE_LINES = 1000


@dataclass(frozen=True, slots=True)
class Sniff:
    """What detection looks at: the text, its name, the parsed whole document (when the text is one JSON
    document) and the first top-level items (array elements, the document, or the JSONL lines that parse)."""

    name: str
    text: str
    document: Any
    items: tuple[Any, ...]

    @classmethod
    def of(cls, text: str, name: str = "<text>") -> Sniff:
        if not text.lstrip().startswith(("{", "[", '"')):  # not JSON nor JSONL at all (e.g. Markdown)
            return cls(name, text, None, ())
        value, error, error_line = load_json_document(text)
        if error is None:
            items = tuple(value[:SAMPLE_ITEMS]) if isinstance(value, list) else (value,)
            return cls(name, text, value, items)
        # an array with a bad element: its readable elements tell (a whole array followed by more lines is
        # JSONL whose first line is an array: its lines tell)
        if text.lstrip().startswith("[") and not error.startswith("invalid JSON (Extra data"):
            elements = (item for _, item, err in iter_json_array(text) if err is None)
            items = tuple(itertools.islice(elements, SAMPLE_ITEMS))
            if items:
                return cls(name, text, None, items)
        items = tuple(_jsonl_items(text))
        if not any(isinstance(item, dict) for item in items):
            # one document over a bound, or broken past its first line (a cut or hand-edited file), whose
            # lines are no JSONL either: say where, not "unrecognised" nor an error on every line
            if error.startswith("json: "):
                raise InputError(name, error)
            if error_line is not None and error_line > 1:
                raise InputError(name, error, line=error_line)
        return cls(name, text, None, items)

    def objects(self) -> Iterator[dict[str, Any]]:
        return (item for item in self.items if isinstance(item, dict))


def _jsonl_items(text: str) -> Iterator[Any]:
    """The first SAMPLE_ITEMS lines that parse, looking no further than SAMPLE_LINES lines (a Markdown file
    of 10,000 lines is not parsed line by line only to find it is not JSON)."""
    taken = 0
    for tried, (_, item, error) in enumerate(iter_jsonl(text), 1):
        if error is None:
            yield item
            taken += 1
        if taken >= SAMPLE_ITEMS or tried >= SAMPLE_LINES:
            return


# read(text, source name, conversation): `conversation` picks one of several conversations or sessions in
# one file (None: the format's default, e.g. the first request, the last Aider session)
Reader = Callable[[str, str, "int | None"], ImportResult]


@dataclass(frozen=True, slots=True)
class Importer:
    """One transcript format. `summary` is one line for users: what is kept and what is not."""

    name: str
    summary: str
    detect: Callable[[Sniff], bool | float]
    read: Reader
    generic: bool = False  # a shape many tools share (API payloads): tried after every specific format
    # reads a large file without holding it as one string (JSONL formats); None: `read` on its text
    read_file: Callable[[Path, int | None], ImportResult] | None = None


_builtins: list[Importer] = []


def register_builtin(importer: Importer) -> Importer:
    if any(i.name == importer.name for i in _builtins):
        raise ValueError(f"importer {importer.name!r} is registered twice")
    _builtins.append(importer)
    return importer


@cache
def plugins() -> tuple[Importer, ...]:
    """Importers other packages declare under the `linn_playground.importers` entry point group.

    A plug-in that fails to load is left out with a warning naming it; it never stops an import."""
    found: list[Importer] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = point.load()
            importer = value() if callable(value) and not isinstance(value, Importer) else value
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break the built-in formats
            warnings.warn(f"importer plug-in {point.name!r} failed to load: {exc}", stacklevel=2)
            continue
        if not isinstance(importer, Importer):
            warnings.warn(
                f"importer plug-in {point.name!r} is not an engine.importers.Importer", stacklevel=2
            )
            continue
        found.append(importer)
    return tuple(found)


def importers() -> list[Importer]:
    """Every importer in detection order: specific built-ins, plug-ins, then the generic built-ins."""
    return (
        [i for i in _builtins if not i.generic]
        + [i for i in plugins() if i.name not in {b.name for b in _builtins}]
        + [i for i in _builtins if i.generic]
    )


def format_names() -> list[str]:
    return [i.name for i in importers()]


def find(name: str) -> Importer:
    for importer in importers():
        if importer.name == name:
            return importer
    raise ValueError(f"unknown format {name!r}; choose one of {', '.join(format_names())}")


def unrecognised(name: str) -> UnknownFormatError:
    """The one line a user sees for a file no importer recognises."""
    return UnknownFormatError(
        f"{name}: unrecognised transcript format; supported: {', '.join(format_names())}"
    )


@dataclass(frozen=True, slots=True)
class Claim:
    """An importer that recognises a text, and how surely (0 < score <= 1)."""

    importer: Importer
    score: float


def claims(sniff: Sniff) -> list[Claim]:
    """Every importer that claims the text, best first (a higher score; on a tie, detection order)."""
    found: list[Claim] = []
    for importer in importers():
        try:
            value = importer.detect(sniff)
        except Exception as exc:  # noqa: BLE001 - no detector's failure breaks detection
            # a built-in one that cannot read the sample (a value of a type its format never has) does not
            # claim it; a plug-in's failure is said
            if importer not in _builtins:
                warnings.warn(f"importer plug-in {importer.name!r} failed to detect: {exc}", stacklevel=2)
            continue
        score = 1.0 if value is True else float(value) if _is_number(value) else 0.0
        if score > 0:
            found.append(Claim(importer, min(score, 1.0)))
    # an agent's own format embeds the API's message shapes (a Cline task is Anthropic messages with its
    # own stamps): the generic shapes claim only what no specific format claims
    if any(not claim.importer.generic for claim in found):
        found = [claim for claim in found if not claim.importer.generic]
    return sorted(found, key=lambda claim: -claim.score)  # stable: ties keep detection order


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def detect(sniff: Sniff) -> Importer | None:
    """The importer whose claim is best, or None when no importer claims the text."""
    found = claims(sniff)
    return found[0].importer if found else None
