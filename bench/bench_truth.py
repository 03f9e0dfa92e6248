"""Ground truth: the engine's figures against what the provider counted and billed, on real transcripts.

    .venv/bin/python bench/bench_truth.py [--real ../shared/real-sessions] [--more tests/data/real-sessions]

For every transcript with recorded usage (Claude Code, Codex, Gemini CLI):
- per call, |as-recorded rebuild − recorded prompt| / recorded prompt, before calibration (coefficient 1,
  the offset learnt from each segment's first call) and after (each model's coefficient fitted on the
  *other* sessions of the same agent, leave-one-out, never on the session it is tested on, then learning
  from the session's own calls before the one predicted, as a host feeding usage back would); the calls
  that set an offset are left out of the errors; the calibration file alone is printed too;
- the recorded cost, and the same cost recomputed straight from the raw file by an independent path (its
  own line reader, genai-prices' own `calc_price`), sub-agent files included;
- the as-recorded rebuild's predicted cost (the calibrated replay priced per call) against the recorded
  cost of the same calls.
Numbers, not pass/fail; the issue's targets: median ≤ 2 %, p90 ≤ 5 %, cost reproduced within 0.5 %, the
predicted cost within 5 %.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from genai_prices import Usage, calc_price

from engine.cost import CostTracker, iter_step_costs
from engine.importers import detect_format, import_file
from engine.importers.claude_branches import subagent_files
from engine.prices import BUILTIN_PRICES
from engine.recorded import recorded_cost, recorded_run
from engine.truth import AS_RECORDED, error_summary, fit_calibration, iter_truth

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-sessions"
MORE = ROOT / "tests" / "data" / "real-sessions"
# the formats whose transcripts keep usage, and the agent each is pooled under (one agent, one calibration)
AGENTS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "gemini-cli-jsonl": "gemini-cli",
}
STEPS = 1_000_000  # as many as the transcript has


def made_up(folder: Path) -> set[str]:
    """Files the folder's README calls a fixture, shortened, or without the tool calls the model made: their
    usage does not describe their text, so neither fitting nor measuring on them says anything."""
    readme = folder / "README.md"
    if not readme.is_file():
        return set()
    rows = [
        line.split("|") for line in readme.read_text(encoding="utf-8").splitlines() if line.startswith("| `")
    ]
    return {
        cells[1].split("`")[1].split("/")[-1]
        for cells in rows
        if len(cells) > 2 and any(word in cells[2] for word in ("fixture", "shortened", "no `toolCalls`"))
    }


def sessions(folders: list[Path]) -> list[tuple[str, Path]]:
    found = []
    for folder in folders:
        skip = made_up(folder)
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")):
            if "subagents" in path.parts or path.name.endswith("-metadata.json") or path.name in skip:
                continue
            try:
                fmt = detect_format(path)
            except ValueError:
                continue
            if fmt in AGENTS:
                found.append((AGENTS[fmt], path))
    return found


def _raw_claude_calls(path: Path) -> dict[str, tuple[dict, str | None]]:
    calls: dict[str, tuple[dict, str | None]] = {}
    for line in path.read_text(encoding="utf-8-sig").split("\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") == "assistant" and isinstance(message, dict) and "usage" in message:
            if message.get("model") != "<synthetic>":
                calls[message.get("id") or entry.get("uuid")] = (message["usage"], message.get("model"))
    return calls


def _price(tokens: Usage, model: str | None, provider: str | None = None) -> float:
    try:
        return float(calc_price(tokens, model or "", provider_id=provider).total_price)
    except LookupError:  # a model genai-prices does not know: unpriced on both paths
        return 0.0


def raw_cost(fmt: str, path: Path) -> float:
    """The billed cost straight from the file: its own reader, genai-prices' own arithmetic."""
    total = 0.0
    if fmt == "claude-code":
        files = [path, *subagent_files(str(path))]
        for usage, model in (call for f in files for call in _raw_claude_calls(f).values()):
            read, write = (
                usage.get("cache_read_input_tokens") or 0,
                usage.get("cache_creation_input_tokens") or 0,
            )
            one_hour = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
            tokens = Usage(
                input_tokens=usage["input_tokens"] + read + write,
                cache_read_tokens=read,
                cache_write_tokens=write,
                cache_write_1h_tokens=one_hour,
                output_tokens=usage["output_tokens"],
            )
            total += _price(tokens, model, "anthropic")
    elif fmt == "codex":
        model, last = None, None
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            payload = entry.get("payload") or {}
            if entry.get("type") == "turn_context" and payload.get("model"):
                model = payload["model"]
            info = payload.get("info") if payload.get("type") == "token_count" else None
            if (
                isinstance(info, dict)
                and info.get("last_token_usage")
                and info.get("total_token_usage") != last
            ):
                last, usage = info.get("total_token_usage"), info["last_token_usage"]
                tokens = Usage(
                    input_tokens=usage["input_tokens"],
                    cache_read_tokens=usage.get("cached_input_tokens", 0),
                    output_tokens=usage["output_tokens"],
                )
                total += _price(tokens, model, "openai")
    else:
        text = path.read_text(encoding="utf-8")
        try:
            messages = json.loads(text).get("messages", [])
        except ValueError:  # the newer recording: a message a line, written again as it changes
            lines = (json.loads(line) for line in text.splitlines() if line.strip())
            messages = list({m.get("id"): m for m in lines if isinstance(m, dict) and "id" in m}.values())
        for message in messages:
            t = message.get("tokens") if message.get("type") == "gemini" else None
            if isinstance(t, dict) and t.get("input"):
                tokens = Usage(
                    input_tokens=t["input"] + (t.get("tool") or 0),
                    cache_read_tokens=t.get("cached") or 0,
                    output_tokens=t.get("output", 0) + (t.get("thoughts") or 0),
                )
                total += _price(tokens, message.get("model"), "google")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--real", type=Path, default=REAL)
    parser.add_argument("--more", type=Path, default=MORE)
    args = parser.parse_args()
    loaded = {}
    for fmt, path in sessions([args.real, args.more]):
        imported = import_file(path)
        run = recorded_run(imported.messages, imported.header(str(path)))
        if run.own_calls:
            truths = list(iter_truth(imported.messages, run, max_steps=STEPS, learn=False))
            loaded[path] = (fmt, imported, run, truths)
    print(f"{len(loaded)} transcripts with recorded usage; prices from {BUILTIN_PRICES.describe()}\n")
    print(
        f"{'transcript':44} {'calls':>5}  {'before: median  p90':>20}  {'after: median  p90':>19}"
        f"  {'recorded $':>10} {'raw $':>9} {'Δ':>6}  {'predicted $':>11} {'Δ':>6}"
    )
    money = {"predicted": 0.0, "recorded": 0.0}
    pooled: dict[str, dict[str, list[float]]] = defaultdict(
        lambda: {"before": [], "after": [], "coarse": [], "file": []}
    )
    for path, (fmt, imported, run, truths) in loaded.items():
        others = {str(p): t for p, (f, _, _, t) in loaded.items() if f == fmt and p != path}
        calibration = fit_calibration(others) if others else None
        after = list(iter_truth(imported.messages, run, calibration=calibration, max_steps=STEPS))
        coarse = iter_truth(imported.messages, run, calibration=calibration, max_steps=STEPS, per_turn=False)
        pooled[fmt]["coarse"] += [t.error for t in coarse if t.error is not None]
        file_only = iter_truth(imported.messages, run, calibration=calibration, max_steps=STEPS, learn=False)
        pooled[fmt]["file"] += [t.error for t in file_only if t.error is not None]
        before_errors = [t.error for t in truths if t.error is not None]
        after_errors = [t.error for t in after if t.error is not None]
        pooled[fmt]["before"] += before_errors
        pooled[fmt]["after"] += after_errors
        b, a = error_summary(before_errors), error_summary(after_errors)
        cost = recorded_cost(run, BUILTIN_PRICES)
        raw = raw_cost(fmt, path)
        tracker = CostTracker(imported.messages, policy=AS_RECORDED, prices=BUILTIN_PRICES)
        replay = iter_step_costs(
            imported.messages, AS_RECORDED, tracker=tracker, truths=iter(after), max_steps=STEPS
        )
        for _ in replay:
            pass
        totals = tracker.totals()
        predicted = totals.cost_at_recorded_usd or 0.0  # the same calls: steps a recorded call made
        own = totals.recorded_cost_usd or 0.0
        money["predicted"] += predicted
        money["recorded"] += own
        print(
            f"{path.name[:44]:44} {len(run.own_calls):>5}  "
            f"{_pct(b['medianErrorPct']):>8} {_pct(b['p90ErrorPct']):>8}    {_pct(a['medianErrorPct']):>8} "
            f"{_pct(a['p90ErrorPct']):>8}  {cost.cost_usd:>10.4f} {raw:>9.4f} {_rel(cost.cost_usd, raw):>6}  "
            f"{predicted:>11.4f} {_rel(predicted, own):>6}"
        )
    print()
    for fmt, errors in pooled.items():
        b, a = error_summary(errors["before"]), error_summary(errors["after"])
        print(
            f"{fmt:12} all calls ({a['calls']}): before median {_pct(b['medianErrorPct'])}, "
            f"p90 {_pct(b['p90ErrorPct'])}; after median {_pct(a['medianErrorPct'])}, "
            f"p90 {_pct(a['p90ErrorPct'])}"
        )
        f = error_summary(errors["file"])
        print(f"{'':12} the calibration file's coefficient alone (not learning from the session's earlier "
              f"calls): median {_pct(f['medianErrorPct'])}, p90 {_pct(f['p90ErrorPct'])}")  # fmt: skip
        c = error_summary(errors["coarse"])
        print(f"{'':12} offsets learnt per model and compaction only (not per user turn): median "
              f"{_pct(c['medianErrorPct'])}, p90 {_pct(c['p90ErrorPct'])} ({c['calls']} calls)")  # fmt: skip
    gap = _rel(money["predicted"], money["recorded"])
    print(f"as-recorded predicted cost, every transcript: ${money['predicted']:.4f} against the recorded "
          f"${money['recorded']:.4f} of the same calls ({gap})")  # fmt: skip
    every = [e for errors in pooled.values() for e in errors["after"]]
    print(f"every agent, after calibration: {error_summary(every)}")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}%"


def _rel(value: float, reference: float) -> str:
    return "—" if not reference else f"{100 * (value - reference) / reference:+.1f}%"


if __name__ == "__main__":
    main()
