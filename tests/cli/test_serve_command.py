"""`serve` starts each browser tab's app with the inputs the terminal was given."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from playground.web.serve import app_command


def test_the_tab_command_carries_every_input_file_and_the_conversation(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"--policy": "p.yaml", "--fences": None, "--calibration": "cal.yaml", "--tools": "tools.json",
             "--system-prompt": None}  # fmt: skip
    command = app_command(Path("/s/session.jsonl"), "seed", "en", files, 2)
    assert shlex.split(command) == [
        sys.executable, "-m", "playground.cli", "/s/session.jsonl", "--defaults", "seed", "--copy", "en",
        "--policy", str(tmp_path / "p.yaml"), "--calibration", str(tmp_path / "cal.yaml"),
        "--tools", str(tmp_path / "tools.json"), "--conversation", "2",
    ]  # fmt: skip


def test_an_empty_host_is_refused_rather_than_binding_every_interface(capsys) -> None:
    from playground.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["serve", "--host", ""])
    assert exited.value.code == 2
    assert (
        "argument --host: an empty host (give 0.0.0.0 to listen on every interface)"
        in capsys.readouterr().err
    )


def test_the_printed_address_is_the_port_bound_and_an_ipv6_host_is_bracketed(monkeypatch, capsys) -> None:
    import textual_serve.server

    bound: list[tuple[str, int]] = []

    class Server:
        def __init__(self, command: str, *, host: str, port: int, title: str) -> None:
            bound.append((host, port))

        def serve(self) -> None:
            pass

    monkeypatch.setattr(textual_serve.server, "Server", Server)
    from playground.web.serve import serve

    assert serve("cmd", host="127.0.0.1", port=0, title="t") == 0
    (host, port), said = bound[0], capsys.readouterr().out.strip()
    assert host == "127.0.0.1"
    assert port > 0 and said == f"linn-playground: serving on http://127.0.0.1:{port}/ (Ctrl+C stops)"
    assert serve("cmd", host="::1", port=18932, title="t") == 0
    assert capsys.readouterr().out.strip() == "linn-playground: serving on http://[::1]:18932/ (Ctrl+C stops)"


def test_listening_on_every_interface_is_said(monkeypatch, capsys) -> None:
    import textual_serve.server

    class Server:
        def __init__(self, command: str, *, host: str, port: int, title: str) -> None:
            pass

        def serve(self) -> None:
            pass

    monkeypatch.setattr(textual_serve.server, "Server", Server)
    from playground.web.serve import serve

    assert serve("cmd", host="*", port=18933, title="t") == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: --host * listens on every interface: anyone who reaches this machine")
    assert serve("cmd", host="[::1]", port=18934, title="t") == 0
    assert capsys.readouterr().out.strip() == "linn-playground: serving on http://[::1]:18934/ (Ctrl+C stops)"
