"""A small session file for the app tests: two runs, tool groups, two fence kinds, a pending call.

Run 2 calls tools three times, so with `toolCallStreak: 2` the streak reminder fires at step 5 (streak
2) and not at the pending step 6 (streak 3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playground.app.inputs import SAMPLES_DIR

TITLE = "sales analysis (test)"
FENCES = [
    {"kind": "project-notes", "llmRole": "system", "placement": "after-system", "lifetime": "persisted"},
    {
        "kind": "memory-context",
        "llmRole": "user",
        "placement": "before-current-user",
        "lifetime": "turn-only",
    },
]
POLICY = {
    "budget": {"maxTokens": 4000, "reservedForResponse": 400},
    "systemReminder": {"thresholds": {"toolCallStreak": 2}},
    "contextTrace": {"enabled": True},
}
ROWS = "\n".join(
    f"{region},{2020 + year},{1000 + 37 * year * (i + 1)}"
    for i, region in enumerate(("north", "south", "east", "west", "centre"))
    for year in range(12)
)


def _call(mid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"c_{mid}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {
        "id": mid,
        "role": "assistant",
        "type": "tool_calls",
        "content": "",
        "metadata": {"tool_calls": [call]},
    }


def _output(mid: str, call_of: str, name: str, text: str) -> dict[str, Any]:
    meta = {"tool_call_id": f"c_{call_of}", "tool_name": name}
    return {"id": mid, "role": "tool", "type": "tool_output", "content": text, "metadata": meta}


def _fence(mid: str, kind: str, role: str, placement: str, text: str) -> dict[str, Any]:
    meta = {"fenceKind": kind, "fenceAttrs": {"source": "store"}, "fencePlacement": placement}
    return {"id": mid, "role": role, "type": "context_injection", "content": text, "metadata": meta}


def messages() -> list[dict[str, Any]]:
    return [
        {
            "id": "sys",
            "role": "system",
            "type": "system_prompt",
            "content": "You are a careful data analyst.",
        },
        _fence("f_notes", "project-notes", "system", "after-system", "Sales data lives in data/sales.csv."),
        {"id": "u1", "role": "user", "type": "user_input", "content": "Load the sales table."},
        _call("a1", "read_file", {"path": "data/sales.csv"}),
        _output("t1", "a1", "read_file", "region,year,total\n" + ROWS),
        _call("a2", "run_sql", {"query": "select count(*) from sales"}),
        _output("t2", "a2", "run_sql", "count\n60"),
        {"id": "f1", "role": "assistant", "type": "final_answer", "content": "Loaded 60 rows, 5 regions."},
        _fence("f_mem", "memory-context", "user", "before-current-user", "The user prefers short answers."),
        {"id": "u2", "role": "user", "type": "user_input", "content": "Which region grew fastest?"},
        _call("a3", "run_sql", {"query": "select region, max(total) - min(total) from sales group by 1"}),
        _output("t3", "a3", "run_sql", "region,growth\n" + ROWS),
        _call("a4", "read_file", {"path": "notes/regions.md"}),
        _output("t4", "a4", "read_file", "# Regions\n" + ROWS),
        _call("a5", "run_sql", {"query": "select 1"}),
        _output("t5", "a5", "run_sql", "1"),
    ]


def write_session(folder: Path, name: str = "sales.jsonl", *, bad_lines: bool = False) -> Path:
    """Write the session (with two broken lines when `bad_lines`) and return its path."""
    header = {"kind": "linn-session", "version": 1, "title": TITLE, "maxSteps": 12}
    header |= {"contextPolicy": POLICY, "fences": FENCES}
    stamped = [{**m, "timestamp": 1715670000000 + 1000 * i} for i, m in enumerate(messages())]
    lines = [json.dumps(header)] + [json.dumps(m) for m in stamped]
    if bad_lines:
        lines.insert(4, "{not json")
        lines.insert(7, json.dumps({"id": "x", "role": "robot", "type": "user_input", "content": "?"}))
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_summarized_twice(folder: Path) -> Path:
    """The summarization sample said twice (ids of the second telling end in `~2`): 25 steps, summaries
    made at steps 13 and 21."""
    lines = (SAMPLES_DIR / "summarization_trigger.jsonl").read_text(encoding="utf-8").splitlines()
    header, body = lines[0], [json.loads(line) for line in lines[1:]]
    again = [{**m, "id": m["id"] + "~2"} for m in body if m["type"] != "system_prompt"]
    path = folder / "twice.jsonl"
    path.write_text("\n".join([header, *map(json.dumps, body + again)]), encoding="utf-8")
    return path
