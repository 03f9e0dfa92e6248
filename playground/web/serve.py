"""`linn-playground serve`: the same Textual playground as a web page (textual-serve).

textual-serve runs the app as a subprocess per browser tab and relays its terminal over a websocket. The
inputs are loaded here first, so a bad session or policy is reported in the terminal (exit 2) rather than
as a dead tab. Bound to 127.0.0.1 unless `--host` says otherwise; a free port is chosen when none is given.
"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

INSTALL_HINT = "pip install 'linn-playground[serve]'"


EVERY_INTERFACE = ("0.0.0.0", "::", "*", "[::]")


def free_port(host: str) -> int:
    address = "" if host.strip() == "*" else host.strip().strip("[]")  # `*`: every interface
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def app_command(
    session: Path,
    defaults: str,
    copy: str,
    files: dict[str, str | None],
    conversation: int | None = None,
    fmt: str | None = None,
) -> str:
    """The shell command textual-serve starts for each tab: this interpreter running the playground, with
    the same inputs (`files`: option → path, e.g. `--policy`, `--calibration`; paths made absolute)."""
    argv = [sys.executable, "-m", "playground.cli", str(session), "--defaults", defaults, "--copy", copy]
    if fmt:
        argv += ["--from", fmt]
    for option, path in files.items():
        if path:
            argv += [option, str(Path(path).resolve())]
    if conversation is not None:
        argv += ["--conversation", str(conversation)]
    return shlex.join(argv)


def serve(command: str, *, host: str, port: int | None, title: str) -> int:
    try:
        from textual_serve.server import Server
    except ImportError:
        print(f"error: serve needs textual-serve; install it with: {INSTALL_HINT}", file=sys.stderr)
        return 2
    chosen = port if port else free_port(host)  # 0 asks for any free port: one is chosen here, to print it
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host  # IPv6 in brackets in a URL
    if host.strip() in EVERY_INTERFACE:
        print(f"warning: --host {host} listens on every interface: anyone who reaches this machine can open "
              "the playground, which reads and writes files as you", file=sys.stderr)  # fmt: skip
    print(f"linn-playground: serving on http://{shown}:{chosen}/ (Ctrl+C stops)", flush=True)
    Server(command, host=host, port=chosen, title=title).serve()
    return 0
