"""`replay` on a long session, as a user runs it: records streamed as they are made, a progress bar on a
terminal, and Ctrl-C ending it with every record written whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _message(mid: str, role: str, kind: str, content: str, turn: int, **metadata) -> dict:
    line = {"id": mid, "role": role, "type": kind, "content": content, "timestamp": turn}
    return line | ({"metadata": metadata} if metadata else {})


def write_session(path: Path, turns: int) -> Path:
    """A coding session: per turn a user input, two tool calls with their outputs, and an answer (three
    LLM calls, so three steps, a turn)."""
    lines = [{"kind": "linn-session", "version": 1, "title": "long"}]
    lines.append(_message("sys", "system", "system_prompt", "You code.", 0))
    for turn in range(turns):
        lines.append(_message(f"u{turn}", "user", "user_input", f"ask {turn}", turn))
        for k in range(2):
            function = {"name": "read_file", "arguments": json.dumps({"path": f"f{turn}_{k}.py"})}
            call = {"id": f"c{turn}_{k}", "type": "function", "function": function}
            lines.append(_message(f"a{turn}_{k}", "assistant", "tool_calls", "", turn, tool_calls=[call]))
            output = f"def f{turn}_{k}():\n    return {turn * k}\n" * 20
            meta = {"tool_call_id": f"c{turn}_{k}", "tool_name": "read_file"}
            lines.append(_message(f"t{turn}_{k}", "tool", "tool_output", output, turn, **meta))
        lines.append(_message(f"f{turn}", "assistant", "final_answer", f"done {turn}", turn))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_ctrl_c_stops_the_replay_between_steps_with_every_record_whole(tmp_path):
    session = write_session(tmp_path / "long.jsonl", turns=1_200)  # 3,600 steps: far more than it makes here
    command = [sys.executable, "-m", "playground.cli", "replay", str(session), "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    first = [json.loads(process.stdout.readline()) for _ in range(3)]  # streamed: records come before the end
    assert [record["step"] for record in first] == [1, 2, 3]
    process.send_signal(signal.SIGINT)
    rest, errors = process.stdout.read(), process.stderr.read()  # through the buffer the lines came by
    process.wait(timeout=120)
    records = first + [json.loads(line) for line in rest.splitlines()]  # every line a whole JSON record
    steps, totals = records[:-1], records[-1]["totals"]
    assert process.returncode == 130
    assert [record["step"] for record in steps] == list(range(1, len(steps) + 1))
    assert len(steps) < 3_600
    assert totals["interrupted"] is True and totals["steps"] == len(steps)
    assert f"replay: interrupted after step {len(steps)}; every record written is whole" in errors
    assert "Traceback" not in errors


def test_a_terminal_shows_a_progress_bar_and_a_piped_stdout_stays_plain_records(tmp_path):
    session = write_session(tmp_path / "short.jsonl", turns=80)  # 240 steps
    master, slave = os.openpty()
    command = [sys.executable, "-m", "playground.cli", "replay", str(session), "--json"]
    env = {**ENV, "TERM": "xterm-256color", "COLUMNS": "120"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, text=True, env=env)
    os.close(slave)
    shown = bytearray()

    def drain() -> None:  # the terminal's side: read until the process closes it
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = process.communicate(timeout=300)
    reader.join(timeout=10)
    os.close(master)
    records = [json.loads(line) for line in out.splitlines()]
    assert process.returncode == 0
    assert len(records) == 241 and records[-1]["totals"]["steps"] == 240
    terminal = shown.decode(errors="replace")
    assert "steps/s" in terminal and "/240" in terminal  # the bar: rate and steps done of the count


def test_ctrl_c_ends_any_command_with_one_line_and_130(tmp_path):
    # (a signal sent before the interpreter has set its own handler kills the process, whatever the code:
    # on a fresh install that takes more than 0.4 s, so the test waits until the command is well under way)
    session = write_session(tmp_path / "long.jsonl", turns=1_200)
    tight = tmp_path / "tight.yaml"
    tight.write_text("budget:\n  maxTokens: 8000\n")
    command = [sys.executable, "-m", "playground.cli", "diff", str(session), "--policy-b", str(tight)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    time.sleep(3.0)
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 130, errors
    assert errors.splitlines()[-1] == "interrupted" and "Traceback" not in errors
