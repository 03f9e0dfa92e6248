"""SummarizerPort: the host's summary agent, and summarizers that work without a network (spec §5.4).

`OfflineSummarizer` is the default: deterministic, within the summary budget, and it keeps what a reader
of a summary needs most: the user's requests, the decisions (answers) and the tools that were used.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    prompt_key: str  # summarization.agentId, or "history_compression"
    model_id: str
    prompt: str  # "{role}: {content}" blocks joined by blank lines
    budget_tokens: int  # floor(totalBudget × budgetPercentage): a hint (spec §9 D9)
    avg_chars_per_token: float = 2.0
    count_tokens: Callable[[str], int] | None = None  # the build's tokenizer, for summarizers that care


class SummarizerPort(ABC):
    name: str = "summarizer"

    @abstractmethod
    def generate(self, request: SummaryRequest) -> str:
        """Return the summary text; raise to signal a failure."""


class FixedSummarizer(SummarizerPort):
    """Always returns the same text (the conformance cases' fake summary agent)."""

    name = "fixed"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, request: SummaryRequest) -> str:
        return self.text


class FailingSummarizer(SummarizerPort):
    """Always fails: lets the playground show `fail-fast` and `continue-if-within-budget`."""

    name = "failing"

    def __init__(self, message: str = "summary agent unavailable") -> None:
        self.message = message

    def generate(self, request: SummaryRequest) -> str:
        raise RuntimeError(self.message)


_BLOCK = re.compile(r"^(system|user|assistant|tool): ", re.MULTILINE)
_TOOL = re.compile(r"工具「([^」]+)」|Tool call (\S+)|the tool \"([^\"]+)\"")


class OfflineSummarizer(SummarizerPort):
    """A deterministic extractive summary: requests, decisions and tools, cut to the budget."""

    name = "offline"

    def generate(self, request: SummaryRequest) -> str:
        requests, answers, tools = [], [], []
        for role, text in _blocks(request.prompt):
            if role == "user":
                requests.append(_first_line(text))
            elif role in ("assistant", "system"):
                answers.append(_first_line(text))
            tools.extend(a or b or c for a, b, c in _TOOL.findall(text))
        lines = []
        if requests:
            lines.append("User requests: " + " | ".join(requests))
        if answers:
            lines.append("Decisions and findings: " + " | ".join(answers))
        if tools:
            lines.append("Tools used: " + ", ".join(dict.fromkeys(tools)))
        return _fit("\n".join(lines) or "Nothing to summarise.", request)


def _fit(text: str, request: SummaryRequest) -> str:
    """Cut to the summary budget: by characters first, then by the tokenizer when one is given."""
    limit = max(40, int(request.budget_tokens * request.avg_chars_per_token))
    while True:
        fitted = text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
        count = request.count_tokens
        if count is None or count(fitted) <= request.budget_tokens or limit <= 40:
            return fitted
        limit = max(40, int(limit * 0.8))


def _blocks(prompt: str) -> list[tuple[str, str]]:
    starts = list(_BLOCK.finditer(prompt))
    out = []
    for n, match in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(prompt)
        out.append((match.group(1), prompt[match.end() : end].strip()))
    return out


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
