"""Write the teaching samples in `sample_sessions/` from their descriptions in `sample_sessions/src/`.

Each `src/NAME.yaml` describes one sample as data: the header (title, lesson, policy, fences), the messages
with their texts, tool calls and outputs, and the companion files (`NAME.lesson.yaml`, fence and policy
files). This script turns them into `NAME.jsonl` and the companions, always byte for byte the same: no
clock, no network, no randomness. Message ids, timestamps and call ids are derived; read_file, grep,
list_dir and edits are computed from a virtual repository (`src/repos/NAME.yaml`) that edits really change.
`descriptions.py` reads the YAML; a bad description exits 2 with one line naming the file and the field.

    .venv/bin/python sample_sessions/make_samples.py            # (re)write the samples
    .venv/bin/python sample_sessions/make_samples.py --check    # exit 1 if a file is missing or stale
    .venv/bin/python sample_sessions/make_samples.py --out DIR  # write into another folder (--src: read one)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from descriptions import DescriptionError, Node, load, text  # sample_sessions/descriptions.py

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
BASE_TIMESTAMP = 1715670000000  # 2024-05-14T07:00:00Z
DEFAULT_MODEL = "claude-sonnet-4-5"
LESSON_HEAD = (
    "# The lesson of this session, checked by the playground on every build (playground/app/lessons.py).\n"
)
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# -- the virtual repository -----------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call and what it returned. `content` is what the model saw; `raw` joins `raw_output`."""

    name: str
    args: dict[str, Any]
    content: str
    raw: dict[str, Any] = field(default_factory=dict)


class Repo:
    """A virtual checkout: tool outputs are computed from the files, and edits change them."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)

    def read_file(self, path: str) -> Call:
        lines = self.files[path].rstrip("\n").split("\n")
        numbered = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, start=1))
        return Call("read_file", {"path": path}, numbered, {"path": path, "totalLines": len(lines)})

    def grep(self, pattern: str, path: str = ".") -> Call:
        regex = re.compile(pattern)
        hits = [
            f"{name}:{n}:{line}"
            for name, body in sorted(self.files.items())
            if path == "." or name.startswith(path)
            for n, line in enumerate(body.split("\n"), start=1)
            if regex.search(line)
        ]
        content = "\n".join(hits) if hits else "No matches found"
        args = {"pattern": pattern, "path": path, "output_mode": "content", "-n": True}
        return Call("grep", args, content, {"matches": len(hits)})

    def list_dir(self, path: str = ".") -> Call:
        names = sorted(n for n in self.files if path == "." or n.startswith(path.rstrip("/") + "/"))
        return Call("list_dir", {"path": path, "recursive": True}, json.dumps(names), {"count": len(names)})

    def append(self, path: str, addition: str) -> Call:
        """An edit that adds `addition` after the file's last two lines (the usual way agents append)."""
        tail = "\n".join(self.files[path].rstrip("\n").split("\n")[-2:]) + "\n"
        return self.edit_file(path, tail, tail + addition)

    def edit_file(self, path: str, old: str, new: str) -> Call:
        body = self.files[path]
        if body.count(old) != 1:
            raise ValueError(f"old is found {body.count(old)} times in {path}, not once")
        self.files[path] = body.replace(old, new)
        line = body[: body.index(old)].count("\n") + 1
        content = f"The file {path} has been updated. 1 replacement made (line {line})."
        return Call("edit_file", {"path": path, "old_string": old, "new_string": new}, content)


def load_repo(node: Node, src: Path) -> Repo | None:
    """`repo: NAME` or `repo: {from: NAME, add: {path: text}}`: src/repos/NAME.yaml plus added files."""
    if node.value is None:
        return None
    spec = node.shorthand("from", ("from", "add"))
    name = spec.get("from").str()
    if not re.fullmatch(r"[\w-]+", name) or not (src / "repos" / f"{name}.yaml").is_file():
        spec.get("from").fail(f"no repository src/repos/{name}.yaml")
    repo_file = load(src / "repos" / f"{name}.yaml")
    files = {path: text(body) for path, body in _text_map(repo_file.get("files")).items()}
    files.update({path: text(body) for path, body in _text_map(spec.get("add", {})).items()})
    return Repo(files)


def _text_map(node: Node) -> dict[str, Node]:
    return {str(key): node.get(str(key)) for key in node.mapping()}


# -- tool calls -----------------------------------------------------------------------------------


def _pytest(node: Node) -> str:
    """`pytest -q` output from `passed`, `failed` (`file::name` -> short report) and `seconds`."""
    node.mapping(("passed", "failed", "seconds"))
    passed, seconds = node.get("passed").int(), node.get("seconds", 0.21).of((int, float), "a number")
    failed = {name: text(report) for name, report in _text_map(node.get("failed", {})).items()}
    for name in failed:
        if "::" not in name:
            node.get("failed").get(name).fail("expected a test named FILE::NAME")
    dots = "." * passed + "F" * len(failed)
    lines = [f"{dots}{' ' * max(1, 72 - len(dots))}[100%]"]
    for test, report in failed.items():
        lines += ["=" * 20 + " FAILURES " + "=" * 20, f"_____ {test.split('::')[1]} _____", report]
    if failed:
        lines += ["=" * 12 + " short test summary info " + "=" * 12]
        lines += [f"FAILED {test} - AssertionError" for test in failed]
        lines.append(f"{len(failed)} failed, {passed} passed in {seconds}s")
    else:
        lines.append(f"{passed} passed in {seconds}s")
    return "\n".join(lines)


def _shell(node: Node, repo: Repo | None) -> Call:
    node.mapping(("command", "output", "pytest", "exit_code"))
    if node.has("output") and node.has("pytest"):
        node.fail("expected output or pytest, not both")
    output = _pytest(node.get("pytest")) if node.has("pytest") else text(node.get("output"))
    args = {"command": node.get("command").str(), "timeout": 120}
    return Call("run_shell", args, output, {"exitCode": node.get("exit_code", 0).int()})


def _search(node: Node, repo: Repo | None) -> Call:
    node.mapping(("query", "results"))
    keys = ("title", "url", "snippet")
    results = [tuple(r.get(k).str() for k in keys) for r in node.get("results").items()]
    shown = "\n\n".join(f"{n}. {t}\n   {u}\n   {s}" for n, (t, u, s) in enumerate(results, start=1))
    return Call("web_search", {"query": node.get("query").str()}, shown, {"resultCount": len(results)})


def _fetch(node: Node, repo: Repo | None) -> Call:
    node.mapping(("url", "text"))
    url, body = node.get("url").str(), text(node.get("text"))
    return Call("web_fetch", {"url": url, "format": "markdown"}, body, {"url": url, "status": 200})


def _python(node: Node, repo: Repo | None) -> Call:
    node.mapping(("code", "output"))
    return Call("run_python", {"code": text(node.get("code"))}, text(node.get("output")), {"exitCode": 0})


def _checkpoint(node: Node, repo: Repo | None) -> Call:
    """A `context_checkpoint` call and its result, in the shape linnkit's checkpoint tool returns."""
    node.mapping(("summary", "taskstate"))
    summary, taskstate = text(node.get("summary")), node.get("taskstate").mapping()
    observation = f"Checkpoint saved. Older history will be pruned. Summary: {summary}"
    data = {"_type": "context_checkpoint", "summary": summary, "taskstate": taskstate}
    args = {"summary": summary, "taskstate": taskstate}
    return Call("context_checkpoint", args, observation, {"data": data})


def _generic(node: Node, repo: Repo | None) -> Call:
    node.mapping(("name", "args", "output", "raw"))
    args, raw = node.get("args").mapping(), node.get("raw", {}).mapping()
    return Call(node.get("name").str(), args, text(node.get("output")), raw)


def _in_repo(kind: str, node: Node, repo: Repo | None) -> Call:
    """read_file PATH, list_dir PATH, grep PATTERN or {pattern, path}, edit_file {path, old, new}, append."""
    if repo is None:
        node.fail("needs a repository (add repo: NAME at the top level)")
    if kind in ("read_file", "list_dir"):
        args = [node.str()]
    elif kind == "grep":
        spec = node.shorthand("pattern", ("pattern", "path"))
        args = [spec.get("pattern").str(), spec.get("path", ".").str()]
    else:
        fields = ("path", "old", "new") if kind == "edit_file" else ("path", "text")
        node.mapping(fields)
        args = [text(node.get(name)) for name in fields]
    try:
        return getattr(repo, kind)(*args)
    except KeyError as error:
        node.fail(f"no file {error} in the repository")
    except (ValueError, re.error) as error:
        node.fail(str(error))


REPO_CALLS = ("read_file", "grep", "list_dir", "edit_file", "append")
CALLS: dict[str, Callable[[Node, Repo | None], Call]] = {
    "shell": _shell,
    "search": _search,
    "fetch": _fetch,
    "python": _python,
    "checkpoint": _checkpoint,
    "call": _generic,
}


def call(node: Node, repo: Repo | None) -> Call:
    kind, spec = node.one_key((*REPO_CALLS, *CALLS))
    return _in_repo(kind, spec, repo) if kind in REPO_CALLS else CALLS[kind](spec, repo)


# -- writing sessions -----------------------------------------------------------------------------


@dataclass
class Writer:
    """Appends AiMessage dicts with sequential ids (`m001`...), a steady clock and stable call ids."""

    slug: str
    repo: Repo | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    clock: int = BASE_TIMESTAMP
    calls_made: int = 0
    ids_made: int = 0  # a duplicated message takes no new id

    def add(self, role: str, type_: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        self.clock += 2000 + 25 * min(len(content), 4000)
        self.ids_made += 1
        message = {"id": f"m{self.ids_made:03d}", "role": role, "type": type_, "content": content}
        message["timestamp"] = self.clock
        if metadata is not None:
            message["metadata"] = metadata
        self.messages.append(message)

    def call_id(self) -> str:
        self.calls_made += 1
        digest = hashlib.sha256(f"{self.slug}:{self.calls_made}".encode()).digest()
        return "call_" + "".join(_B62[b % 62] for b in digest[:24])

    def wire(self, c: Call | Node) -> dict[str, Any]:
        if isinstance(c, Node):
            c.mapping(("name", "args"))
            c = Call(c.get("name").str(), c.get("args").mapping(), "")
        function = {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)}
        return {"id": self.call_id(), "type": "function", "function": function}

    def output(self, call_id: str, c: Call) -> None:
        raw = json.dumps({"observation": c.content, **c.raw}, ensure_ascii=False)
        metadata = {"tool_call_id": call_id, "tool_name": c.name, "raw_output": raw}
        self.add("tool", "tool_output", c.content, metadata)

    def tools(self, node: Node) -> None:
        """One assistant `tool_calls` message with every call, then one `tool_output` per call."""
        spec = node.shorthand("calls", ("calls", "content"))
        calls = [call(item, self.repo) for item in spec.get("calls").items()]
        wire_calls = [self.wire(c) for c in calls]
        self.add("assistant", "tool_calls", text(spec.get("content", "")), {"tool_calls": wire_calls})
        for wire_call, c in zip(wire_calls, calls, strict=True):
            self.output(wire_call["id"], c)


def _fence(w: Writer, node: Node) -> None:
    node.mapping(("kind", "role", "placement", "content", "attrs"))
    metadata = {"fenceKind": node.get("kind").str(), "fenceAttrs": node.get("attrs", {}).mapping()}
    metadata["fencePlacement"] = node.get("placement").str()
    w.add(node.get("role").str(), "context_injection", text(node.get("content")), metadata)


def _message(w: Writer, node: Node) -> None:
    node.mapping(("role", "type", "content", "metadata"))
    metadata = node.get("metadata").mapping() if node.has("metadata") else None
    w.add(node.get("role").str(), node.get("type").str(), text(node.get("content")), metadata)


def _user(w: Writer, node: Node) -> None:
    w.clock += 45_000  # the user takes a while to write
    w.add("user", "user_input", text(node))


def _output(w: Writer, node: Node) -> None:
    """A tool output whose call id is given (an orphan, when no call declares it)."""
    rest = {key: value for key, value in node.mapping().items() if key != "call_id"}
    w.output(node.get("call_id").str(), call(Node(rest, node.file, node.path), w.repo))


def _duplicate(w: Writer, node: Node) -> None:
    if node.value != "last" or not w.messages:
        node.fail("expected last, after at least one message")
    w.messages.append(dict(w.messages[-1]))  # a retrying host stores the same message twice, same id


MESSAGES: dict[str, Callable[[Writer, Node], None]] = {
    "system": lambda w, node: w.add("system", "system_prompt", text(node)),
    "user": _user,
    "answer": lambda w, node: w.add("assistant", "final_answer", text(node)),
    "thought": lambda w, node: w.add("assistant", "thought", text(node)),
    "fence": _fence,
    "tools": lambda w, node: w.tools(node),
    "orphan_call": lambda w, node: w.add("assistant", "tool_calls", "", {"tool_calls": [w.wire(node)]}),
    "output": _output,
    "duplicate": _duplicate,
    "message": _message,
}

TOP_LEVEL = (
    "title", "lesson", "model", "max_steps", "policy", "fences", "header_extra", "repo", "messages",
    "lesson_file", "fences_file", "files",
)  # fmt: skip


def header(desc: Node) -> dict[str, Any]:
    """The header line. Every suggested policy turns the trace on so decisions carry reasons."""
    head: dict[str, Any] = {"kind": "linn-session", "version": 1, "title": desc.get("title").str()}
    head["lesson"] = text(desc.get("lesson"))
    head["modelId"] = desc.get("model", DEFAULT_MODEL).str()
    if desc.has("max_steps"):
        head["maxSteps"] = desc.get("max_steps").int()
    head["contextPolicy"] = {**desc.get("policy").mapping(), "contextTrace": {"enabled": True}}
    if desc.has("fences"):
        head["fences"] = [item.mapping() for item in desc.get("fences").items()]
    head.update(desc.get("header_extra", {}).mapping())
    return head


def session(name: str, desc: Node, src: Path) -> str:
    """The JSONL text of one sample: the header line, then one AiMessage per line."""
    w = Writer(name, load_repo(desc.get("repo", None), src))
    for item in desc.get("messages").items():
        kind, node = item.one_key(MESSAGES)
        MESSAGES[kind](w, node)
    lines = [header(desc), *w.messages]
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)


def companions(name: str, desc: Node) -> dict[str, str]:
    """The files next to a session: its lesson, its fences as a fence file, any other file it names."""
    lesson = text(desc.get("lesson_file"))
    try:
        parsed = yaml.safe_load(lesson)
    except yaml.YAMLError as error:
        desc.get("lesson_file").fail(f"YAML error: {str(error).splitlines()[0]}")
    if not isinstance(parsed, dict):
        desc.get("lesson_file").fail("expected a lesson (a YAML mapping)")
    out = {f"{name}.lesson.yaml": LESSON_HEAD + lesson}
    if desc.has("fences_file"):
        fences = [item.mapping() for item in desc.get("fences").items()]
        dumped = yaml.safe_dump({"fences": fences}, sort_keys=False, allow_unicode=True, width=110)
        out[f"{name}.fences.yaml"] = text(desc.get("fences_file")) + dumped
    for file_name, body in _text_map(desc.get("files", {})).items():
        if Path(file_name).name != file_name:
            body.fail("expected a file name without a folder")
        out[file_name] = text(body)
    return out


def render(src: Path = SRC) -> dict[str, str]:
    """File name -> text of every sample and companion file, from the descriptions in `src`."""
    out: dict[str, str] = {}
    for path in sorted(src.glob("*.yaml")):
        desc = load(path)
        desc.mapping(TOP_LEVEL)
        files = {f"{path.stem}.jsonl": session(path.stem, desc, src), **companions(path.stem, desc)}
        for twice in set(files) & set(out):
            desc.fail(f"{twice} is written by another description too")
        out.update(files)
    if not out:
        raise DescriptionError(f"{src}: no sample descriptions (*.yaml)")
    return out


def write_atomically(path: Path, body: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        stream.write(body)
    os.replace(temporary, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files instead of writing")
    parser.add_argument("--src", type=Path, default=SRC, help="the descriptions (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=HERE, help="where the samples go (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        rendered = render(args.src)
    except DescriptionError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = []
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
    for name, body in rendered.items():
        path = args.out / name
        if path.exists() and path.read_text(encoding="utf-8") == body:
            continue
        stale.append(name)
        if not args.check:
            write_atomically(path, body)
    verb = "stale" if args.check else "written"
    print(f"{len(stale)} {verb}: {', '.join(stale)}" if stale else "all samples up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
