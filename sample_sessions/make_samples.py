"""Write the teaching sessions in `sample_sessions/`: one JSONL file per lesson, header line first.

Deterministic: no clock, no network, and every random choice comes from a `random.Random` with a fixed
seed. Run it from the repository root; `--check` compares the files on disk with what it would write.

    .venv/bin/python sample_sessions/make_samples.py          # (re)write the .jsonl files
    .venv/bin/python sample_sessions/make_samples.py --check  # exit 1 if a file is missing or stale

The content is meant to read like real agent work. Three small worlds supply it: `feedcache` (a Python
feed poller with an HTTP caching bug, read through `read_file`/`grep` on a virtual repository that edits
really change), a support-ticket export (statistics computed from a seeded data set), and web research
(search results and page excerpts written out here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

OUT_DIR = Path(__file__).resolve().parent
BASE_TIMESTAMP = 1715670000000  # 2024-05-14T07:00:00Z
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# -- writing sessions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call and what it returned. `content` is what the model saw; `raw` joins `raw_output`."""

    name: str
    args: dict[str, Any]
    content: str
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Writer:
    """Appends AiMessage dicts with sequential ids (`m001`...), a steady clock and stable call ids."""

    slug: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    clock: int = BASE_TIMESTAMP
    calls_made: int = 0
    ids_made: int = 0

    def add(self, role: str, type_: str, content: str, metadata: dict | None = None) -> str:
        self.clock += 2000 + 25 * min(len(content), 4000)
        self.ids_made += 1
        message: dict[str, Any] = {
            "id": f"m{self.ids_made:03d}",
            "role": role,
            "type": type_,
            "content": content,
            "timestamp": self.clock,
        }
        if metadata is not None:
            message["metadata"] = metadata
        self.messages.append(message)
        return message["id"]

    def system(self, text: str) -> str:
        return self.add("system", "system_prompt", text)

    def user(self, text: str) -> str:
        self.clock += 45_000
        return self.add("user", "user_input", text)

    def answer(self, text: str) -> str:
        return self.add("assistant", "final_answer", text)

    def thought(self, text: str) -> str:
        return self.add("assistant", "thought", text)

    def fence(self, kind: str, role: str, placement: str, content: str, attrs: dict | None = None) -> str:
        metadata = {"fenceKind": kind, "fenceAttrs": attrs or {}, "fencePlacement": placement}
        return self.add(role, "context_injection", content, metadata)

    def call_id(self) -> str:
        self.calls_made += 1
        digest = hashlib.sha256(f"{self.slug}:{self.calls_made}".encode()).digest()
        return "call_" + "".join(_B62[b % 62] for b in digest[:24])

    def tools(self, *calls: Call, content: str = "") -> list[str]:
        """One assistant `tool_calls` message with every call, then one `tool_output` per call."""
        ids = [self.call_id() for _ in calls]
        wire_calls = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)},
            }
            for cid, c in zip(ids, calls, strict=True)
        ]
        written = [self.add("assistant", "tool_calls", content, {"tool_calls": wire_calls})]
        for cid, c in zip(ids, calls, strict=True):
            written.append(self.output(cid, c))
        return written

    def output(self, call_id: str, c: Call) -> str:
        raw = json.dumps({"observation": c.content, **c.raw}, ensure_ascii=False)
        metadata = {"tool_call_id": call_id, "tool_name": c.name, "raw_output": raw}
        return self.add("tool", "tool_output", c.content, metadata)


def header(
    title: str,
    lesson: str,
    policy: dict[str, Any],
    *,
    model_id: str = "claude-sonnet-4-5",
    max_steps: int | None = None,
    fences: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The header line. Every suggested policy turns the trace on so decisions carry reasons."""
    data: dict[str, Any] = {"kind": "linn-session", "version": 1, "title": title, "lesson": lesson}
    data["modelId"] = model_id
    if max_steps is not None:
        data["maxSteps"] = max_steps
    data["contextPolicy"] = {**policy, "contextTrace": {"enabled": True}}
    if fences is not None:
        data["fences"] = fences
    data.update(extra)
    return data


def jsonl(head: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    lines = [head, *messages]
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)


# -- the feedcache repository ---------------------------------------------------------------------

FEEDCACHE_FILES: dict[str, str] = {
    "pyproject.toml": """\
[project]
name = "feedcache"
version = "0.4.2"
description = "Poll RSS/Atom feeds politely: conditional requests, one SQLite file."
requires-python = ">=3.11"
dependencies = ["httpx>=0.27", "defusedxml>=0.7"]

[project.optional-dependencies]
test = ["pytest>=8", "ruff>=0.4"]

[project.scripts]
feedcache = "feedcache.cli:main"

[tool.ruff]
line-length = 100

[tool.ruff.lint]
select = ["E", "F", "B", "I"]
""",
    "feedcache/__init__.py": '''\
"""feedcache: poll feeds with conditional GETs and keep new items in SQLite."""

__version__ = "0.4.2"
''',
    "feedcache/http.py": '''\
"""Minimal HTTP client used by the fetcher: one GET with a timeout, headers as a plain dict."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

USER_AGENT = "feedcache/0.4 (+https://example.org/feedcache)"


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def get(url: str, headers: dict[str, str] | None = None, timeout: float = 10.0) -> Response:
    request_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    with httpx.Client(follow_redirects=True, timeout=timeout) as client:
        r = client.get(url, headers=request_headers)
    # A plain dict is easier to cache and log than httpx.Headers.
    return Response(r.status_code, {k: v for k, v in r.headers.items()}, r.content)
''',
    "feedcache/fetcher.py": '''\
"""Polls one feed with conditional requests so an unchanged feed costs a 304, not a download."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from feedcache import http
from feedcache.parse import parse_feed
from feedcache.store import Store, Validators

log = logging.getLogger(__name__)


@dataclass
class PollResult:
    url: str
    status: int
    new_items: int
    downloaded_bytes: int


class Fetcher:
    def __init__(self, store: Store) -> None:
        self.store = store

    def conditional_headers(self, url: str) -> dict[str, str]:
        validators = self.store.load_validators(url)
        headers = {}
        if validators.etag:
            headers["If-None-Match"] = validators.etag
        return headers

    def poll(self, url: str) -> PollResult:
        resp = http.get(url, headers=self.conditional_headers(url))
        if resp.status == 304:
            log.debug("not modified: %s", url)
            return PollResult(url, 304, 0, 0)
        items = parse_feed(resp.body)
        new = self.store.add_items(url, items)
        etag, last_modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
        self.store.save_validators(url, Validators(etag=etag, last_modified=last_modified))
        return PollResult(url, resp.status, new, len(resp.body))
''',
    "feedcache/store.py": '''\
"""SQLite-backed store for feed items and HTTP validators (ETag / Last-Modified)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS validators (url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT);
CREATE TABLE IF NOT EXISTS items (
    url TEXT, guid TEXT, title TEXT, published TEXT, PRIMARY KEY (url, guid)
);
"""


@dataclass(frozen=True)
class Validators:
    etag: str | None = None
    last_modified: str | None = None


class Store:
    def __init__(self, path: Path | str = ":memory:") -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)

    def load_validators(self, url: str) -> Validators:
        row = self.db.execute(
            "SELECT etag, last_modified FROM validators WHERE url = ?", (url,)
        ).fetchone()
        return Validators(*row) if row else Validators()

    def save_validators(self, url: str, validators: Validators) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO validators VALUES (?, ?, ?)",
            (url, validators.etag, validators.last_modified),
        )
        self.db.commit()

    def add_items(self, url: str, items: list[dict]) -> int:
        before = self.db.total_changes
        self.db.executemany(
            "INSERT OR IGNORE INTO items VALUES (?, ?, ?, ?)",
            [(url, i["guid"], i["title"], i.get("published")) for i in items],
        )
        self.db.commit()
        return self.db.total_changes - before
''',
    "feedcache/parse.py": '''\
"""Just enough RSS 2.0 / Atom parsing for guid, title and date."""

from __future__ import annotations

import logging

from defusedxml import ElementTree

log = logging.getLogger(__name__)
ATOM = "{http://www.w3.org/2005/Atom}"


def parse_feed(body: bytes) -> list[dict]:
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        log.warning("unparsable feed body (%d bytes)", len(body))
        return []
    if root.tag == f"{ATOM}feed":
        return [_atom_entry(e) for e in root.iter(f"{ATOM}entry")]
    return [_rss_item(i) for i in root.iter("item")]


def _rss_item(item) -> dict:
    guid = item.findtext("guid") or item.findtext("link") or ""
    title = item.findtext("title") or ""
    return {"guid": guid, "title": title, "published": item.findtext("pubDate")}


def _atom_entry(entry) -> dict:
    return {
        "guid": entry.findtext(f"{ATOM}id") or "",
        "title": entry.findtext(f"{ATOM}title") or "",
        "published": entry.findtext(f"{ATOM}updated"),
    }
''',
    "feedcache/scheduler.py": '''\
"""The poll loop: every feed once per interval, a failing feed never stops the others."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

import httpx

from feedcache.fetcher import Fetcher, PollResult

log = logging.getLogger(__name__)


def poll_all(fetcher: Fetcher, urls: Iterable[str]) -> list[PollResult]:
    results = []
    for url in urls:
        try:
            results.append(fetcher.poll(url))
        except httpx.TimeoutException:
            log.warning("timeout: %s", url)
        except Exception:
            pass
    return results


def run_forever(fetcher: Fetcher, urls: list[str], interval: float = 900.0) -> None:
    while True:
        started = time.monotonic()
        results = poll_all(fetcher, urls)
        fresh = sum(1 for r in results if r.status == 200)
        log.info("polled %d feeds, %d downloaded", len(results), fresh)
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
''',
    "feedcache/cli.py": '''\
"""`feedcache poll feeds.csv --db feeds.sqlite`."""

from __future__ import annotations

import argparse
import csv
import logging
import sys

from feedcache.fetcher import Fetcher
from feedcache.scheduler import poll_all, run_forever
from feedcache.store import Store


def read_urls(path: str) -> list[str]:
    try:
        with open(path, newline="") as handle:
            return [row["url"] for row in csv.DictReader(handle)]
    except (OSError, KeyError) as exc:
        print(f"cannot read {path}: {exc}", file=sys.stderr)
        return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="feedcache")
    parser.add_argument("command", choices=["poll", "serve"])
    parser.add_argument("feeds")
    parser.add_argument("--db", default="feeds.sqlite")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    fetcher = Fetcher(Store(args.db))
    urls = read_urls(args.feeds)
    if args.command == "serve":
        run_forever(fetcher, urls)
    for result in poll_all(fetcher, urls):
        print(f"{result.status} {result.new_items:4d} {result.url}")
    return 0
''',
    "tests/test_fetcher.py": """\
from feedcache import fetcher as fetcher_mod
from feedcache.fetcher import Fetcher
from feedcache.http import Response
from feedcache.store import Store

RSS = b"<rss><channel><item><guid>a1</guid><title>First</title></item></channel></rss>"
URL = "https://example.org/feed.xml"


def fake_get(responses):
    calls = []

    def get(url, headers=None, timeout=10.0):
        calls.append(headers or {})
        return responses.pop(0)

    return get, calls


def test_first_poll_downloads(monkeypatch):
    get, _ = fake_get([Response(200, {"ETag": '"v1"'}, RSS)])
    monkeypatch.setattr(fetcher_mod.http, "get", get)
    result = Fetcher(Store()).poll(URL)
    assert result.status == 200 and result.new_items == 1


def test_second_poll_sends_etag(monkeypatch):
    get, calls = fake_get([Response(200, {"ETag": '"v1"'}, RSS), Response(304, {}, b"")])
    monkeypatch.setattr(fetcher_mod.http, "get", get)
    fetcher = Fetcher(Store())
    fetcher.poll(URL)
    assert fetcher.poll(URL).status == 304
    assert calls[1] == {"If-None-Match": '"v1"'}
""",
    "tests/test_scheduler.py": """\
import httpx

from feedcache.fetcher import PollResult
from feedcache.scheduler import poll_all


class FlakyFetcher:
    def poll(self, url):
        if "slow" in url:
            raise httpx.ReadTimeout("timed out")
        if "broken" in url:
            raise ValueError("bad feed")
        return PollResult(url, 200, 1, 120)


def test_one_timeout_does_not_stop_the_rest():
    results = poll_all(FlakyFetcher(), ["https://a/feed", "https://slow/feed", "https://b/feed"])
    assert [r.url for r in results] == ["https://a/feed", "https://b/feed"]


def test_broken_feed_is_reported():
    results = poll_all(FlakyFetcher(), ["https://broken/feed"])
    assert results == []
""",
}


class Repo:
    """A virtual checkout: tool outputs are computed from the files, and edits change them."""

    def __init__(self, files: dict[str, str], root: str) -> None:
        self.files = dict(files)
        self.root = root

    def read(self, path: str) -> Call:
        lines = self.files[path].rstrip("\n").split("\n")
        numbered = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, start=1))
        return Call("read_file", {"path": path}, numbered, {"path": path, "totalLines": len(lines)})

    def grep(self, pattern: str, path: str = ".") -> Call:
        regex = re.compile(pattern)
        hits = [
            f"{name}:{n}:{line}"
            for name, text in sorted(self.files.items())
            if path == "." or name.startswith(path)
            for n, line in enumerate(text.split("\n"), start=1)
            if regex.search(line)
        ]
        content = "\n".join(hits) if hits else "No matches found"
        args = {"pattern": pattern, "path": path, "output_mode": "content", "-n": True}
        return Call("grep", args, content, {"matches": len(hits)})

    def list_dir(self, path: str = ".") -> Call:
        names = sorted(n for n in self.files if path == "." or n.startswith(path.rstrip("/") + "/"))
        return Call("list_dir", {"path": path, "recursive": True}, json.dumps(names), {"count": len(names)})

    def append(self, path: str, text: str) -> Call:
        """An edit that adds `text` after the file's last two lines (the usual way agents append)."""
        tail = "\n".join(self.files[path].rstrip("\n").split("\n")[-2:]) + "\n"
        return self.edit(path, tail, tail + text)

    def long_lines(self, path: str, limit: int) -> list[str]:
        """ruff's E501 lines for one file."""
        lines = self.files[path].split("\n")
        return [
            f"{path}:{n}:{limit + 1}: E501 Line too long ({len(line)} > {limit})"
            for n, line in enumerate(lines, start=1)
            if len(line) > limit
        ]

    def edit(self, path: str, old: str, new: str) -> Call:
        text = self.files[path]
        if text.count(old) != 1:
            raise ValueError(f"edit of {path}: old_string found {text.count(old)} times")
        self.files[path] = text.replace(old, new)
        line = text[: text.index(old)].count("\n") + 1
        content = f"The file {path} has been updated. 1 replacement made (line {line})."
        return Call("edit_file", {"path": path, "old_string": old, "new_string": new}, content)


def shell(command: str, output: str, exit_code: int = 0) -> Call:
    return Call("run_shell", {"command": command, "timeout": 120}, output, {"exitCode": exit_code})


def search(query: str, results: list[tuple[str, str, str]]) -> Call:
    """A web search: (title, url, snippet) triples, shown numbered as search tools do."""
    shown = "\n\n".join(f"{n}. {t}\n   {u}\n   {s}" for n, (t, u, s) in enumerate(results, start=1))
    return Call("web_search", {"query": query}, shown, {"resultCount": len(results)})


def fetch(url: str, text: str) -> Call:
    return Call("web_fetch", {"url": url, "format": "markdown"}, text, {"url": url, "status": 200})


def python(code: str, output: str) -> Call:
    return Call("run_python", {"code": code}, output, {"exitCode": 0})


FEEDCACHE_SYSTEM = (
    "You are Forge, a coding agent working in the repository /srv/feedcache (Python 3.11, httpx, SQLite). "
    "Read code before you change it, run the tests after every change, keep diffs small and say what you "
    "ran. Tools: list_dir, read_file, grep, edit_file, run_shell, web_search, web_fetch, run_python."
)

CHANGELOG = """\
# Changelog

## 0.4.2 (2024-04-30)
- Atom feeds: use `<id>` as the guid.
- `feedcache serve` logs one summary line per poll.

## 0.4.1 (2024-04-12)
- Store validators per URL instead of per host.
"""

HTTPX_HEADERS_DOC = """\
# Requests - HTTPX

## Headers

The response headers are available as a dictionary-like interface:

```pycon
>>> r.headers
Headers({
    'content-encoding': 'gzip',
    'transfer-encoding': 'chunked',
    'connection': 'close',
    'server': 'nginx/1.0.4',
    'x-runtime': '148ms',
    'etag': '"e1ca502697e5c9317743dc078f67693f"',
    'content-type': 'application/json'
})
```

The `Headers` data type is case-insensitive, so you can use any capitalization.

```pycon
>>> r.headers['Content-Type']
'application/json'

>>> r.headers.get('content-type')
'application/json'
```

Multiple values for a single response header are represented as a single comma-separated value, as per
RFC 7230.

Iterating with `.items()` or `.keys()` yields the header names in lowercase: `Headers` stores them
normalised, so a `dict` built from `.items()` loses the case-insensitive lookup."""

RFC9110_EXCERPT = """\
# RFC 9110: HTTP Semantics — 13.1.3. If-Modified-Since

The "If-Modified-Since" header field makes a GET or HEAD request method conditional on the selected
representation's modification date being more recent than the date provided in the field-value.
Transfer of the selected representation's data is avoided if that data has not changed.

  If-Modified-Since = HTTP-date

An example of the field is:

  If-Modified-Since: Sat, 29 Oct 1994 19:43:31 GMT

A recipient MUST ignore If-Modified-Since if the request contains an If-None-Match header field; the
condition in If-None-Match is considered to be a more accurate replacement for the condition in
If-Modified-Since, and the two are only combined for the sake of interoperating with older
intermediaries that might not implement If-None-Match.

A recipient MUST ignore the If-Modified-Since header field if the received field-value is not a valid
HTTP-date, the field-value has more than one member, or if the request method is neither GET nor HEAD.

# 13.2.2. Precedence of Preconditions

When more than one conditional request header field is present in a request, the order in which the
fields are evaluated becomes important. [...]

3. When If-None-Match is present, evaluate the If-None-Match precondition:
   - if true, continue to step 5
   - if false for GET/HEAD, respond 304 (Not Modified)
4. When the method is GET or HEAD, If-None-Match is not present, and If-Modified-Since is present,
   evaluate the If-Modified-Since precondition:
   - if true, continue to step 5
   - if false, respond 304 (Not Modified)"""


def _pytest(passed: int, failed: dict[str, str] | None = None, seconds: float = 0.21) -> str:
    """`pytest -q` output: `passed` passing tests, then the failures (`file::name` -> short report)."""
    failed = failed or {}
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


def _staging_feeds() -> list[dict[str, Any]]:
    """240 staging feeds with the validators their servers send, seeded so the numbers never move."""
    rng = random.Random(2405)
    hosts = ["blog", "news", "status", "releases", "podcast", "jobs", "docs", "community"]
    feeds = []
    for n in range(240):
        kind = rng.choices(["both", "etag", "last-modified", "none"], weights=[58, 12, 18, 12])[0]
        feeds.append(
            {
                "url": f"https://{rng.choice(hosts)}.example-{n % 37:02d}.org/feed.xml",
                "validators": kind,
                "changed": rng.random() < 0.15,
                "bytes": int(rng.lognormvariate(10.6, 0.8)),
            }
        )
    return feeds


def _feeds_csv_head(feeds: list[dict[str, Any]]) -> str:
    rows = [f"{f['url']},{f['url'].split('/')[2].split('.')[0]}" for f in feeds[:2]]
    return "241 staging/feeds.csv\nurl,category\n" + "\n".join(rows)


def _savings_table(feeds: list[dict[str, Any]]) -> str:
    def downloads(fixed: bool) -> tuple[int, int]:
        hit = [f for f in feeds if not fixed or f["changed"] or f["validators"] == "none"]
        return len(hit), sum(f["bytes"] for f in hit)

    before_n, before_b = downloads(False)
    after_n, after_b = downloads(True)
    rows = [
        "poll 2 of 2 over 240 feeds (recorded headers, 15% of feeds changed between polls)",
        "",
        "                  200 (download)   304 (not modified)   bytes downloaded",
        f"before the fix    {before_n:14d}   {240 - before_n:18d}   {before_b / 1e6:13.1f} MB",
        f"after the fix     {after_n:14d}   {240 - after_n:18d}   {after_b / 1e6:13.1f} MB",
        "",
        f"saved per poll: {before_b / 1e6 - after_b / 1e6:.1f} MB ({100 * (1 - after_b / before_b):.0f}%)",
    ]
    return "\n".join(rows)


def _validator_breakdown(feeds: list[dict[str, Any]]) -> str:
    lines = ["validators      feeds   changed   304 after fix"]
    for kind in ("both", "etag", "last-modified", "none"):
        group = [f for f in feeds if f["validators"] == kind]
        changed = sum(f["changed"] for f in group)
        not_modified = 0 if kind == "none" else len(group) - changed
        lines.append(f"{kind:<14s} {len(group):6d}   {changed:7d}   {not_modified:13d}")
    return "\n".join(lines)


# -- 3. tool_loop_runs ----------------------------------------------------------------------------


def tool_loop_runs() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    repo = Repo(FEEDCACHE_FILES, "/srv/feedcache")
    repo.files["CHANGELOG.md"] = CHANGELOG
    w = Writer("tool_loop_runs")
    w.system(FEEDCACHE_SYSTEM)
    _loop_run_diagnose(w, repo)
    _loop_run_fix(w, repo)
    _loop_run_last_modified(w, repo)
    _loop_run_atom_guids(w, repo)
    _loop_run_lint(w, repo)
    _loop_run_question(w)
    _loop_run_measure(w, repo)
    policy = {
        "budget": {"maxTokens": 12000, "reservedForResponse": 2000},
        "toolHistory": {
            "strategy": "per-run",
            "retentionMode": "compress",
            "keepLatestRuns": 1,
            "maxInteractionGroups": 60,
        },
    }
    groups = sum(m["type"] == "tool_calls" for m in w.messages)
    head = header(
        "Tool loop over seven runs: old tool groups compressed per run",
        f"Seven user turns of code reading, web research and edits ({groups} tool groups): with toolHistory "
        "per-run only the last run that used tools keeps raw groups; older groups become one compressed "
        "line each, and working memory keeps the newest lines that fit.\n"
        "Try strategy per-pair or none, or retention drop, and watch compressed lines appear, vanish or "
        "become dropped groups; lower maxInteractionGroups to 12 (the default) to see the group cap.",
        policy,
    )
    return head, w.messages


def _loop_run_diagnose(w: Writer, repo: Repo) -> None:
    w.user(
        "The staging poller downloads every feed on every poll, even feeds that haven't changed in weeks. "
        "Our egress bill doubled this month. Find out why; don't change anything yet."
    )
    w.tools(repo.list_dir())
    w.tools(
        shell(
            "journalctl -u feedcache-staging --since '-2h' --no-pager | tail -6",
            "\n".join(
                f"May 14 {h:02d}:{m:02d}:0{n} stg-poller-1 feedcache[2117]: INFO feedcache.scheduler: "
                f"polled 240 feeds, 240 downloaded"
                for n, (h, m) in enumerate([(5, 15), (5, 30), (5, 45), (6, 0), (6, 15), (6, 30)])
            ),
        )
    )
    w.tools(repo.read("feedcache/scheduler.py"), repo.read("feedcache/cli.py"))
    w.tools(repo.read("feedcache/fetcher.py"), repo.read("feedcache/http.py"))
    w.thought(
        "conditional_headers only sends If-None-Match when the store has an ETag. Check whether the "
        "store ever gets one: where is save_validators fed from?"
    )
    w.tools(repo.grep(r"ETag|etag|Last-Modified"))
    w.tools(repo.grep(r"save_validators|load_validators"))
    w.tools(repo.read("feedcache/store.py"))
    w.tools(
        shell(
            "sqlite3 /var/lib/feedcache/staging.sqlite "
            "'SELECT count(*), count(etag), count(last_modified) FROM validators'",
            "240|0|0",
        )
    )
    w.tools(
        shell(
            "curl -sI https://blog.example-03.org/feed.xml",
            "HTTP/2 200 \ncontent-type: application/rss+xml; charset=utf-8\ncontent-length: 48213\n"
            'etag: "5f2a-61b3c0de"\nlast-modified: Mon, 22 Apr 2024 09:14:02 GMT\n'
            "cache-control: max-age=600\nserver: nginx",
        )
    )
    w.thought(
        "HTTP/2 sends header names in lowercase, and the store has 240 rows but no ETag at all. The dict "
        "built in http.get probably has lowercase keys, so headers.get('ETag') is None. Confirm how httpx "
        "iterates headers."
    )
    w.tools(
        search(
            "httpx Headers items lowercase keys",
            [
                (
                    "Requests - HTTPX",
                    "https://www.python-httpx.org/quickstart/#response-headers",
                    "The Headers data type is case-insensitive, so you can use any capitalization.",
                ),
                (
                    "Headers.items() returns lower-cased keys · encode/httpx · Discussion #1843",
                    "https://github.com/encode/httpx/discussions/1843",
                    "items() yields the normalised (lower-case) names; use .raw or multi_items() "
                    "if you need the original casing…",
                ),
                (
                    "API Reference - HTTPX",
                    "https://www.python-httpx.org/api/#headers",
                    "class httpx.Headers(headers, encoding=None): case-insensitive multi-dict.",
                ),
            ],
        )
    )
    w.tools(fetch("https://www.python-httpx.org/quickstart/#response-headers", HTTPX_HEADERS_DOC))
    w.tools(
        shell(
            "python -c \"import httpx; r = httpx.get('https://blog.example-03.org/feed.xml'); "
            'print(sorted(dict(r.headers.items())))"',
            "['cache-control', 'content-length', 'content-type', 'etag', 'last-modified', 'server']",
        )
    )
    w.tools(repo.read("pyproject.toml"), shell("pip show httpx | head -2", "Name: httpx\nVersion: 0.27.0"))
    w.tools(repo.read("tests/test_fetcher.py"))
    w.tools(
        shell(
            "python -m pytest -q tests/test_fetcher.py",
            _pytest(2),
        )
    )
    w.answer(
        "Found it. `http.get` turns the response headers into a plain dict with "
        "`{k: v for k, v in r.headers.items()}`, and httpx yields header names in lowercase. "
        '`Fetcher.poll` then looks up `resp.headers.get("ETag")` and `"Last-Modified"`, which are '
        "always `None`, so the store never gets a validator (staging: 240 rows, 0 ETags, 0 dates) and "
        "every poll is an unconditional GET that downloads the whole feed.\n\n"
        "The tests did not catch it because the fake responses in `tests/test_fetcher.py` use "
        '`{"ETag": ...}` with the capitalised name, which real httpx never produces.\n\n'
        "Proposed fix: normalise header names once in `http.get` (lowercase) and read `etag` / "
        "`last-modified` in the fetcher, plus a regression test with lowercase headers as httpx "
        "returns them."
    )


def _loop_run_fix(w: Writer, repo: Repo) -> None:
    w.user("Makes sense. Fix it and add a regression test that would have caught it.")
    w.tools(repo.read("feedcache/http.py"), repo.read("tests/test_fetcher.py"))
    w.tools(repo.grep(r"headers\.get\(|\.headers\b", "feedcache"))
    w.tools(
        repo.edit(
            "feedcache/http.py",
            "    # A plain dict is easier to cache and log than httpx.Headers.\n"
            "    return Response(r.status_code, {k: v for k, v in r.headers.items()}, r.content)\n",
            "    return Response(r.status_code, normalise_headers(r.headers.items()), r.content)\n\n\n"
            "def normalise_headers(items) -> dict[str, str]:\n"
            '    """Header names in lowercase, as HTTP/2 sends them and httpx yields them."""\n'
            "    return {name.lower(): value for name, value in items}\n",
        )
    )
    w.tools(
        repo.edit(
            "feedcache/fetcher.py",
            'etag, last_modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")',
            'etag, last_modified = resp.headers.get("etag"), resp.headers.get("last-modified")',
        )
    )
    w.tools(
        shell(
            "python -m pytest -q tests/test_fetcher.py",
            _pytest(
                1,
                {
                    "tests/test_fetcher.py::test_second_poll_sends_etag": (
                        "    assert fetcher.poll(URL).status == 304\n"
                        """>   assert calls[1] == {"If-None-Match": '"v1"'}\n"""
                        """E   AssertionError: assert {} == {'If-None-Match': '"v1"'}\n"""
                        "E     Right contains 1 more item:\n"
                        """E     {'If-None-Match': '"v1"'}"""
                    )
                },
            ),
            exit_code=1,
        )
    )
    w.thought(
        "Expected: the fakes still use the capitalised 'ETag'. Production never sends that key after "
        "normalise_headers, so the fakes should use lowercase names too."
    )
    w.tools(repo.grep(r'"ETag"', "tests"))
    w.tools(
        repo.edit(
            "tests/test_fetcher.py",
            """    get, _ = fake_get([Response(200, {"ETag": '"v1"'}, RSS)])""",
            """    get, _ = fake_get([Response(200, {"etag": '"v1"'}, RSS)])""",
        )
    )
    w.tools(
        repo.edit(
            "tests/test_fetcher.py",
            """    get, calls = fake_get([Response(200, {"ETag": '"v1"'}, RSS), Response(304, {}, b"")])""",
            """    get, calls = fake_get([Response(200, {"etag": '"v1"'}, RSS), Response(304, {}, b"")])""",
        )
    )
    w.tools(
        repo.edit(
            "tests/test_fetcher.py",
            "from feedcache.http import Response\n",
            "from feedcache.http import Response, normalise_headers\n",
        ),
    )
    w.tools(
        repo.append(
            "tests/test_fetcher.py",
            "\n\ndef test_header_names_are_lowercased_like_httpx():\n"
            '    headers = normalise_headers([("ETag", \'"v1"\'), ("Last-Modified", "Mon, 22 Apr 2024")])\n'
            '    assert headers == {"etag": \'"v1"\', "last-modified": "Mon, 22 Apr 2024"}\n',
        )
    )
    w.tools(
        shell(
            "python -m pytest -q tests/test_fetcher.py",
            _pytest(3, seconds=0.19),
        )
    )
    w.tools(shell("python -m pytest -q", _pytest(5, seconds=0.24)))
    w.tools(
        shell(
            "git diff --stat",
            " feedcache/fetcher.py   |  2 +-\n feedcache/http.py      |  8 ++++++--\n"
            " tests/test_fetcher.py  | 11 ++++++++---\n 3 files changed, 16 insertions(+), 5 deletions(-)",
        )
    )
    w.answer(
        "Fixed and covered:\n"
        "- `feedcache/http.py`: new `normalise_headers()`; `get()` returns lowercase header names.\n"
        "- `feedcache/fetcher.py`: reads `etag` and `last-modified`.\n"
        "- `tests/test_fetcher.py`: the fakes now use lowercase names like real httpx, and "
        "`test_header_names_are_lowercased_like_httpx` pins the normalisation.\n\n"
        "`pytest -q tests/test_fetcher.py`: 3 passed. Before the fake change, "
        "`test_second_poll_sends_etag` failed exactly the way production behaves (no If-None-Match)."
    )


def _loop_run_last_modified(w: Writer, repo: Repo) -> None:
    w.user(
        "About a fifth of our feeds only send Last-Modified, no ETag. Handle those too. And check in the "
        "RFC what a server does when a request carries both If-None-Match and If-Modified-Since."
    )
    w.tools(
        search(
            "RFC 9110 If-None-Match If-Modified-Since both present precedence",
            [
                (
                    "RFC 9110: HTTP Semantics",
                    "https://www.rfc-editor.org/rfc/rfc9110.html#name-if-modified-since",
                    "A recipient MUST ignore If-Modified-Since if the request contains an If-None-Match "
                    "header field…",
                ),
                (
                    "HTTP conditional requests - HTTP | MDN",
                    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Conditional_requests",
                    "If-None-Match … If-Modified-Since … the server only sends back the requested "
                    "resource if it has changed.",
                ),
            ],
        )
    )
    w.tools(fetch("https://www.rfc-editor.org/rfc/rfc9110.html#name-if-modified-since", RFC9110_EXCERPT))
    w.tools(
        shell(
            "curl -sI https://status.example-11.org/feed.xml",
            "HTTP/2 200 \ncontent-type: application/atom+xml\ncontent-length: 9120\n"
            "last-modified: Tue, 14 May 2024 05:58:40 GMT\nserver: cloudflare",
        )
    )
    w.tools(repo.grep(r"If-None-Match|If-Modified-Since"))
    w.tools(repo.read("feedcache/fetcher.py"))
    w.tools(
        repo.edit(
            "feedcache/fetcher.py",
            '            headers["If-None-Match"] = validators.etag\n        return headers\n',
            '            headers["If-None-Match"] = validators.etag\n'
            "        if validators.last_modified:  # RFC 9110 13.1.3: "
            "servers ignore it when If-None-Match is sent\n"
            '            headers["If-Modified-Since"] = validators.last_modified\n'
            "        return headers\n",
        )
    )
    w.thought(
        "Add a test next to test_second_poll_sends_etag: a feed with only last-modified must send "
        "If-Modified-Since on the second poll and get the 304 through."
    )
    w.tools(repo.read("tests/test_fetcher.py"))
    test = (
        "\n\ndef test_last_modified_only_feed_sends_if_modified_since(monkeypatch):\n"
        '    first = Response(200, {"last-modified": "Mon, 22 Apr 2024 09:14:02 GMT"}, RSS)\n'
        '    get, calls = fake_get([first, Response(304, {}, b"")])\n'
        '    monkeypatch.setattr(fetcher_mod.http, "get", get)\n'
        "    fetcher = Fetcher(Store())\n"
        "    fetcher.poll(URL)\n"
        "    assert fetcher.poll(URL).status == 304\n"
        '    assert calls[1] == {"If-Modified-Since": "Mon, 22 Apr 2024 09:14:02 GMT"}\n'
    )
    w.tools(repo.append("tests/test_fetcher.py", test))
    w.tools(
        shell(
            "python -m pytest -q",
            _pytest(6),
        )
    )
    w.tools(
        shell(
            "curl -s -o /dev/null -w '%{http_code}\\n' -H 'If-Modified-Since: Mon, 22 Apr 2024 09:14:02 GMT' "
            "https://status.example-11.org/feed.xml",
            "304",
        )
    )
    w.answer(
        "Done. `conditional_headers` now sends `If-Modified-Since` whenever the store has a "
        "Last-Modified date, next to `If-None-Match` when there is an ETag.\n\n"
        "What the RFC says (RFC 9110 §13.1.3 and §13.2.2): a server MUST ignore If-Modified-Since when "
        "the request also has If-None-Match, because the ETag comparison is the more accurate one. "
        "Sending both is still right: servers that ignore ETags fall back to the date, and servers that "
        "honour both use the ETag.\n\n"
        "New test `test_last_modified_only_feed_sends_if_modified_since`; the full suite passes "
        "(6 passed), and a live check against status.example-11.org answers 304."
    )


def _loop_run_atom_guids(w: Writer, repo: Repo) -> None:
    w.user(
        "Unrelated: after the docs site moved to Atom, people see every docs entry twice. Look at how "
        "guids are derived for Atom entries and tell me what's going on before fixing anything."
    )
    w.tools(repo.read("feedcache/parse.py"))
    w.tools(repo.grep(r"guid", "feedcache"))
    w.tools(
        shell(
            'sqlite3 /var/lib/feedcache/staging.sqlite "SELECT guid, title FROM items WHERE url LIKE '
            "'https://docs.%' ORDER BY title LIMIT 6\"",
            "https://docs.example-07.org/guides/install|Install guide\n"
            "tag:docs.example-07.org,2024:guides/install|Install guide\n"
            "https://docs.example-07.org/guides/upgrade|Upgrading to 3.0\n"
            "tag:docs.example-07.org,2024:guides/upgrade|Upgrading to 3.0\n"
            "https://docs.example-07.org/reference/cli|CLI reference\n"
            "tag:docs.example-07.org,2024:reference/cli|CLI reference",
        )
    )
    w.thought(
        "Each entry exists twice: once with the link as guid (from the old RSS feed, where the guid "
        "element was missing) and once with the Atom tag: URI. So the duplicates are a migration "
        "artefact, not a parser bug. Check the old RSS feed really had no guid."
    )
    w.tools(
        shell(
            "git log --oneline -3 -- feedcache/parse.py",
            "9c41d2e Atom feeds: use <id> as the guid\n"
            "51be0a7 parse: fall back to <link> when an RSS item has no <guid>\n"
            "0f3e6a9 initial parser",
        )
    )
    w.tools(
        shell(
            "curl -s https://web.archive.org/web/2024id_/https://docs.example-07.org/feed.rss | head -12",
            '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n<channel>\n'
            "  <title>Example docs</title>\n  <link>https://docs.example-07.org/</link>\n"
            "  <item>\n    <title>Install guide</title>\n"
            "    <link>https://docs.example-07.org/guides/install</link>\n"
            "    <pubDate>Tue, 02 Apr 2024 08:00:00 GMT</pubDate>\n  </item>\n  <item>\n"
            "    <title>Upgrading to 3.0</title>",
        )
    )
    w.tools(
        shell(
            'sqlite3 /var/lib/feedcache/staging.sqlite "SELECT count(*), count(DISTINCT title) FROM items '
            "WHERE url = 'https://docs.example-07.org/feed.atom'\"",
            "74|37",
        )
    )
    w.tools(
        search(
            "Atom feed migration duplicate entries guid id link feed readers",
            [
                (
                    "Moving from RSS to Atom without duplicating entries",
                    "https://blog.example.net/2019/rss-to-atom-migration",
                    "Readers key entries on guid/id. If the new atom:id differs from the old guid, every "
                    "entry shows up again; keep the old guid as the atom:id or accept one round…",
                ),
                (
                    "RFC 4287 - The Atom Syndication Format §4.2.6",
                    "https://www.rfc-editor.org/rfc/rfc4287#section-4.2.6",
                    "The atom:id element conveys a permanent, universally unique identifier for an "
                    "entry or feed… its content MUST be an IRI.",
                ),
            ],
        )
    )
    w.tools(
        python(
            "import sqlite3\n"
            "db = sqlite3.connect('/var/lib/feedcache/staging.sqlite')\n"
            'rows = db.execute("SELECT url, title, count(*) FROM items GROUP BY url, title '
            'HAVING count(*) > 1").fetchall()\n'
            "print(len(rows), 'duplicated titles')\n"
            "print(sorted({r[0] for r in rows}))",
            "37 duplicated titles\n['https://docs.example-07.org/feed.atom']",
        )
    )
    w.answer(
        "It's a one-off migration artefact, not a parser bug:\n"
        "- The old docs RSS feed had no `<guid>`, so `_rss_item` used the `<link>` as the guid "
        "(commit 51be0a7).\n"
        "- The new Atom feed has proper `<id>` values (`tag:docs.example-07.org,2024:…`), which "
        "`_atom_entry` uses (commit 9c41d2e).\n"
        "- Same entries, different guids, so `INSERT OR IGNORE` stores each one again: 37 duplicated "
        "titles, all from docs.example-07.org.\n\n"
        "Options: delete the 37 old link-keyed rows once, or ask the docs team to use the old links as "
        "atom:id (RFC 4287 only requires an IRI). I'd do the one-off cleanup; no code change needed."
    )


def _loop_run_lint(w: Writer, repo: Repo) -> None:
    w.user(
        "Agreed, I'll clean those rows myself. Now run the whole suite and ruff, fix what's red, "
        "and add a CHANGELOG entry for the caching fix."
    )
    w.tools(
        shell(
            "python -m pytest -q",
            _pytest(6),
        )
    )
    w.tools(
        shell(
            "ruff check .",
            "\n".join(repo.long_lines("feedcache/fetcher.py", 100))
            + "\ntests/test_fetcher.py:1:1: I001 [*] Import block is un-sorted or un-formatted\n"
            "Found 2 errors.\n[*] 1 fixable with the `--fix` option.",
            exit_code=1,
        )
    )
    w.tools(repo.read("feedcache/fetcher.py"))
    w.tools(
        repo.edit(
            "feedcache/fetcher.py",
            "        if validators.last_modified:  # RFC 9110 13.1.3: "
            "servers ignore it when If-None-Match is sent\n",
            "        # RFC 9110 13.1.3: a server ignores If-Modified-Since when If-None-Match is present.\n"
            "        if validators.last_modified:\n",
        )
    )
    w.tools(shell("ruff check --fix tests/", "Found 1 error (1 fixed, 0 remaining)."))
    w.tools(shell("ruff check .", "All checks passed!"))
    w.tools(
        shell(
            "git status --short",
            " M feedcache/fetcher.py\n M feedcache/http.py\n M tests/test_fetcher.py",
        )
    )
    w.tools(repo.read("CHANGELOG.md"))
    w.tools(
        repo.edit(
            "CHANGELOG.md",
            "# Changelog\n",
            "# Changelog\n\n## Unreleased\n"
            "- Conditional polling works again: header names are normalised to lowercase, so ETag and "
            "Last-Modified are stored and sent back (If-None-Match / If-Modified-Since).\n",
        )
    )
    w.tools(
        shell(
            "python -m pytest -q && git diff --stat",
            _pytest(6, seconds=0.23)
            + "\n CHANGELOG.md           |  4 ++++\n feedcache/fetcher.py   |  5 ++++-\n"
            " feedcache/http.py      |  8 ++++++--\n tests/test_fetcher.py  | 23 ++++++++++++++++++---\n"
            " 4 files changed, 33 insertions(+), 7 deletions(-)",
        )
    )
    w.answer(
        "All green: 6 passed, `ruff check .` clean. Fixed one E501 in `fetcher.py` (moved the RFC "
        "comment onto its own line) and let ruff sort the imports in `tests/test_fetcher.py`. "
        "CHANGELOG has an Unreleased entry for the conditional-polling fix."
    )


def _loop_run_question(w: Writer) -> None:
    w.user(
        "Quick question before the numbers: many feeds send Cache-Control: max-age. Should the poller "
        "also skip a feed entirely while its max-age hasn't expired?"
    )
    w.answer(
        "Yes, as a second step. A conditional GET still costs a request and a 304 round trip; honouring "
        "`max-age` avoids the request itself. In the staging sample most feeds say `max-age=600` or more, "
        "and we poll every 900 s, so the gain today is small. It matters if we ever poll more often "
        "than every 10 minutes. I'd store `expires_at` next to the validators and skip the feed in "
        "`poll_all` until then; `no-cache`/`no-store` should mean 'always revalidate', never 'skip'. "
        "Want me to do that after the measurement?"
    )


def _loop_run_measure(w: Writer, repo: Repo) -> None:
    feeds = _staging_feeds()
    w.user(
        "Before we deploy: estimate what the fix saves per poll on the staging feed list. The recorded "
        "response headers of all 240 feeds are in staging/feeds_headers.jsonl."
    )
    w.tools(
        shell(
            "head -3 staging/feeds_headers.jsonl && wc -l staging/feeds_headers.jsonl",
            "\n".join(
                json.dumps({"url": f["url"], "validators": f["validators"], "bytes": f["bytes"]})
                for f in feeds[:3]
            )
            + "\n240 staging/feeds_headers.jsonl",
        )
    )
    w.tools(shell("wc -l staging/feeds.csv && head -3 staging/feeds.csv", _feeds_csv_head(feeds)))
    w.tools(
        python(
            "import json\n"
            "feeds = [json.loads(line) for line in open('staging/feeds_headers.jsonl')]\n"
            "print(len(feeds), round(sum(f['bytes'] for f in feeds) / 1e6, 1), 'MB per full poll')",
            f"240 {sum(f['bytes'] for f in feeds) / 1e6:.1f} MB per full poll",
        )
    )
    w.tools(
        python(
            "import json, random\n"
            "feeds = [json.loads(line) for line in open('staging/feeds_headers.jsonl')]\n"
            "rng = random.Random(2405)\n"
            "changed = {f['url'] for f in feeds if rng.random() < 0.15}\n"
            "def downloads(fixed):\n"
            "    hit = [f for f in feeds if not fixed or f['url'] in changed or f['validators'] == 'none']\n"
            "    return len(hit), sum(f['bytes'] for f in hit)\n"
            "print('poll 2 of 2 over 240 feeds (recorded headers, 15% of feeds changed between polls)\\n')\n"
            "print(' ' * 18 + '200 (download)   304 (not modified)   bytes downloaded')\n"
            "for label, fixed in [('before the fix', False), ('after the fix', True)]:\n"
            "    n, size = downloads(fixed)\n"
            "    print(f'{label:<18}{n:14d}   {240 - n:18d}   {size / 1e6:13.1f} MB')\n"
            "saved = downloads(False)[1] - downloads(True)[1]\n"
            "print(f'\\nsaved per poll: {saved / 1e6:.1f} MB ({saved / downloads(False)[1]:.0%})')",
            _savings_table(feeds),
        )
    )
    w.tools(
        python(
            "print('validators      feeds   changed   304 after fix')\n"
            "for kind in ('both', 'etag', 'last-modified', 'none'):\n"
            "    group = [f for f in feeds if f['validators'] == kind]\n"
            "    moved = sum(f['url'] in changed for f in group)\n"
            "    fresh = 0 if kind == 'none' else len(group) - moved\n"
            "    print(f'{kind:<14} {len(group):6d}   {moved:7d}   {fresh:13d}')",
            _validator_breakdown(feeds),
        )
    )
    w.thought(
        "The simulation assumes 15% of feeds change between polls. Cross-check with a live double poll "
        "against staging: back to back, almost nothing changes, so the second poll should be all 304 "
        "except the feeds that send no validators."
    )
    no_validators = sum(f["validators"] == "none" for f in feeds)
    with_etag = sum(f["validators"] in ("both", "etag") for f in feeds)
    with_date = sum(f["validators"] in ("both", "last-modified") for f in feeds)
    poll = "feedcache poll staging/feeds.csv --db /tmp/stg.sqlite | awk '{print $1}' | sort | uniq -c"
    w.tools(shell(f"rm -f /tmp/stg.sqlite && {poll}", "    240 200"))
    w.tools(shell(poll, f"    {no_validators + 2:3d} 200\n    {238 - no_validators:3d} 304"))
    w.tools(
        shell(
            "sqlite3 /tmp/stg.sqlite 'SELECT count(*), count(etag), count(last_modified) FROM validators'",
            f"240|{with_etag}|{with_date}",
        )
    )


# -- the support-ticket export --------------------------------------------------------------------

CHANNELS = ("email", "chat", "phone")
PRODUCTS = ("billing", "mobile-app", "api", "web")
PRIORITIES = ("low", "normal", "high", "urgent")


def _tickets() -> list[dict[str, Any]]:
    """1,200 Q1 tickets. Resolution time has real structure: email, the API product, a slow first
    response and a reopen all make it longer, so the analysis below finds true effects."""
    rng = random.Random(31)
    rows = []
    for n in range(1200):
        day = rng.randrange(90)  # 2024-01-01 + day
        channel = rng.choices(CHANNELS, weights=[45, 35, 20])[0]
        product = rng.choices(PRODUCTS, weights=[30, 30, 15, 25])[0]
        priority = rng.choices(PRIORITIES, weights=[25, 50, 20, 5])[0]
        first = max(1, int(rng.lognormvariate({"email": 4.4, "chat": 1.6, "phone": 0.7}[channel], 0.9)))
        reopened = rng.random() < (0.16 if product == "api" else 0.08)
        hours = rng.lognormvariate(2.2, 0.75)
        hours *= {"email": 1.7, "chat": 0.8, "phone": 0.7}[channel]
        hours *= {"billing": 0.9, "mobile-app": 1.0, "api": 1.5, "web": 1.0}[product]
        hours *= {"low": 1.3, "normal": 1.0, "high": 0.7, "urgent": 0.4}[priority]
        hours *= 2.1 if reopened else 1.0
        hours *= 1.35 if (day + 0) % 7 in (5, 6) else 1.0  # day 0 is Monday 2024-01-01
        hours += first / 60 * 0.5
        csat = None if rng.random() < 0.38 else max(1, min(5, round(5.6 - hours / 14 + rng.gauss(0, 0.8))))
        rows.append(
            {
                "ticket_id": f"T-{24000 + n}",
                "day": day,
                "channel": channel,
                "product": product,
                "priority": priority,
                "first_response_min": first,
                "resolution_h": round(hours, 1),
                "reopened": reopened,
                "csat": csat,
            }
        )
    return rows


def _date(day: int) -> str:
    months = [(1, 31), (2, 29), (3, 31)]
    for month, length in months:
        if day < length:
            return f"2024-{month:02d}-{day + 1:02d}"
        day -= length
    raise ValueError(day)


def _quantile(values: list[float], q: float) -> float:
    """pandas' default (linear) quantile."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _group_table(rows: list[dict[str, Any]], key: Callable[[dict], str], label: str) -> str:
    """Resolution hours per group: n, median, p90, share over the 24 h SLA (pandas-like)."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row["resolution_h"])
    lines = [f"{label:<12s} {'n':>5s} {'median_h':>9s} {'p90_h':>7s} {'over_sla':>9s}"]
    for name, hours in sorted(groups.items(), key=lambda kv: -statistics.median(kv[1])):
        over = sum(h > 24 for h in hours) / len(hours)
        lines.append(
            f"{name:<12s} {len(hours):5d} {statistics.median(hours):9.1f} "
            f"{_quantile(hours, 0.9):7.1f} {over:9.1%}"
        )
    return "\n".join(lines)


def _describe(rows: list[dict[str, Any]]) -> str:
    columns = ("first_response_min", "resolution_h", "csat")
    stats: dict[str, list[str]] = {}
    for column in columns:
        values = [float(r[column]) for r in rows if r[column] is not None]
        stats[column] = [
            f"{len(values):.1f}",
            f"{statistics.fmean(values):.2f}",
            f"{statistics.stdev(values):.2f}",
            f"{min(values):.2f}",
            f"{_quantile(values, 0.25):.2f}",
            f"{_quantile(values, 0.5):.2f}",
            f"{_quantile(values, 0.75):.2f}",
            f"{max(values):.2f}",
        ]
    lines = [f"{'':<6s}" + "".join(f"{c:>20s}" for c in columns)]
    for n, name in enumerate(("count", "mean", "std", "min", "25%", "50%", "75%", "max")):
        lines.append(f"{name:<6s}" + "".join(f"{stats[c][n]:>20s}" for c in columns))
    return "\n".join(lines)


def _head(rows: list[dict[str, Any]]) -> str:
    names = (
        "ticket_id",
        "created_at",
        "channel",
        "product",
        "priority",
        "first_response_min",
        "resolution_h",
        "reopened",
        "csat",
    )
    table = []
    for r in rows[:5]:
        csat = "NaN" if r["csat"] is None else f"{r['csat']:.1f}"
        day, hours = _date(r["day"]), f"{r['resolution_h']:.1f}"
        table.append((r["ticket_id"], day, r["channel"], r["product"], r["priority"],
                      str(r["first_response_min"]), hours, str(r["reopened"]), csat))  # fmt: skip
    widths = [max(len(name), *(len(row[i]) for row in table)) for i, name in enumerate(names)]
    lines = ["   " + "  ".join(name.rjust(w) for name, w in zip(names, widths, strict=True))]
    for n, row in enumerate(table):
        lines.append(f"{n:<3d}" + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines) + "\n\n(1200, 9)"


def _counts(rows: list[dict[str, Any]], column: str) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row[column]] = counts.get(row[column], 0) + 1
    lines = [column]
    lines += [f"{k:<12s}{v:6d}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines) + "\nName: count, dtype: int64"


def _first_response_bucket(row: dict[str, Any]) -> str:
    minutes = row["first_response_min"]
    return "<30 min" if minutes < 30 else "30-120 min" if minutes <= 120 else ">120 min"


def _over_sla(rows: list[dict[str, Any]], keep: Callable[[dict], bool] = lambda r: True) -> str:
    chosen = [r for r in rows if keep(r)]
    return f"{sum(r['resolution_h'] > 24 for r in chosen) / len(chosen):.1%}"


def _two_way(
    rows: list[dict[str, Any]], keys: tuple[str, Callable, str, Callable], cols: tuple[str, ...]
) -> str:
    """Share of tickets over the SLA as pandas prints a pivot_table: (index name, index key, columns
    name, column key) and the column labels in order."""
    index_name, row_key, columns_name, col_key = keys
    lines = [f"{columns_name:<12s}" + "".join(f"{c:>12s}" for c in cols), index_name]
    for name in sorted({row_key(r) for r in rows}):
        cells = []
        for col in cols:
            cell = [r for r in rows if row_key(r) == name and col_key(r) == col]
            share = sum(r["resolution_h"] > 24 for r in cell) / len(cell) if cell else None
            cells.append(f"{'NaN':>12s}" if share is None else f"{share:12.2f}")
        lines.append(f"{name:<12s}" + "".join(cells))
    return "\n".join(lines)


TICKETS_SYSTEM = (
    "You are Quill, a data analysis agent. Work in the Python sandbox with pandas (the data is in "
    "data/). Show the code you run, check numbers before you report them, and say how sure you are. "
    "For long analyses call context_checkpoint with a summary of what you found, so older steps can be "
    "pruned from your context."
)

LOAD = "import pandas as pd\ndf = pd.read_csv('data/tickets_q1.csv', parse_dates=['created_at'])\n"


def checkpoint_call(summary: str, taskstate: dict[str, Any]) -> Call:
    """A `context_checkpoint` call and its result, in the shape linnkit's checkpoint tool returns."""
    observation = f"Checkpoint saved. Older history will be pruned. Summary: {summary}"
    data = {"_type": "context_checkpoint", "summary": summary, "taskstate": taskstate}
    return Call(
        "context_checkpoint", {"summary": summary, "taskstate": taskstate}, observation, {"data": data}
    )


# -- 4. checkpoint_midtask ------------------------------------------------------------------------


def checkpoint_midtask() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = _tickets()
    w = Writer("checkpoint_midtask")
    w.system(TICKETS_SYSTEM)
    w.user("Load data/tickets_q1.csv (our Q1 support tickets) and give me a quick overview.")
    w.tools(python(LOAD + "print(df.head())\nprint(df.shape)", _head(rows)))
    w.tools(python("print(df.describe())", _describe(rows)))
    w.tools(
        python("print(df['channel'].value_counts())", _counts(rows, "channel")),
        python("print(df['product'].value_counts())", _counts(rows, "product")),
    )
    csat_share = sum(r["csat"] is not None for r in rows) / len(rows)
    w.answer(
        "1,200 tickets from 2024-01-01 to 2024-03-31, 9 columns. Email is the biggest channel (533), "
        "then chat (413) and phone (254); billing and the mobile app are the busiest products.\n\n"
        f"Resolution time is skewed: median {_quantile([r['resolution_h'] for r in rows], 0.5):.1f} h, "
        f"mean {statistics.fmean(r['resolution_h'] for r in rows):.1f} h, a long tail up to "
        f"{max(r['resolution_h'] for r in rows):.0f} h. First response has a median of 11 minutes but a "
        f"mean near an hour (email). CSAT is filled in for only {csat_share:.0%} of tickets, so treat it "
        "with care."
    )
    w.user(
        "Our SLA is resolution within 24 hours. Find out what drives long resolution times. Take as many "
        "steps as you need, and save a checkpoint once the exploration is done so you keep the thread."
    )
    _checkpoint_exploration(w, rows)
    _checkpoint_modelling(w, rows)
    policy = {
        "budget": {"maxTokens": 16000, "reservedForResponse": 2000},
        "checkpoint": {"keepPairsBefore": 2, "triggerToolName": "context_checkpoint"},
    }
    head = header(
        "Checkpoint mid-task: everything before it is pruned",
        "A data analysis agent explores a ticket export in nine steps, calls context_checkpoint with a "
        "summary, then keeps modelling; history before the checkpoint is pruned (CHECKPOINT_PURGED), "
        "except the user's request, the system prompt and the last keepPairsBefore tool groups.\n"
        "Move checkpoint.keepPairsBefore from 2 to 0 or 5 and watch raw groups before the checkpoint "
        "come back; the budget is generous so every drop you see is the checkpoint's.",
        policy,
        model_id="gpt-4.1",
    )
    return head, w.messages


def _checkpoint_exploration(w: Writer, rows: list[dict[str, Any]]) -> None:
    sla = "df['over_sla'] = df['resolution_h'] > 24\n"
    breached = sum(r["resolution_h"] > 24 for r in rows)
    w.tools(
        python(
            sla + "print(df['over_sla'].mean(), df['over_sla'].sum())", f"{breached / len(rows)} {breached}"
        )
    )
    agg = ".agg(n=('resolution_h', 'size'), median_h=('resolution_h', 'median'),\n" + (
        "    p90_h=('resolution_h', lambda s: s.quantile(0.9)), over_sla=('over_sla', 'mean'))"
    )
    cuts = [
        ("channel", lambda r: r["channel"]),
        ("product", lambda r: r["product"]),
        ("priority", lambda r: r["priority"]),
        ("reopened", lambda r: str(r["reopened"])),
    ]
    for column, key in cuts:
        w.tools(
            python(
                f"print(df.groupby('{column}'){agg}.sort_values('median_h', ascending=False))",
                _group_table(rows, key, column),
            )
        )
    w.tools(
        python(
            "bins = [0, 30, 120, float('inf')]\n"
            "df['first_resp'] = pd.cut(df['first_response_min'], bins, labels=['<30 min', '30-120 min', "
            "'>120 min'])\n" + f"print(df.groupby('first_resp'){agg})",
            _group_table(rows, _first_response_bucket, "first_resp"),
        )
    )
    w.thought(
        "Slow first response goes with email, so the first-response effect may just be the channel. "
        "Split over_sla by channel and first-response bucket before claiming anything."
    )
    w.tools(
        python(
            "print(df.pivot_table('over_sla', 'channel', 'first_resp', aggfunc='mean').round(2))",
            _two_way(
                rows,
                ("channel", lambda r: r["channel"], "first_resp", _first_response_bucket),
                ("<30 min", "30-120 min", ">120 min"),
            ),
        )
    )
    w.tools(
        python(
            "df['created'] = df['created_at'].dt.dayofweek.map(\n"
            "    lambda d: 'weekend' if d >= 5 else 'weekday')\n"
            f"print(df.groupby('created'){agg})",
            _group_table(rows, lambda r: "weekend" if r["day"] % 7 in (5, 6) else "weekday", "created"),
        )
    )
    w.tools(
        python(
            "print(df.pivot_table('over_sla', 'product', 'reopened', aggfunc='mean').round(2))",
            _two_way(
                rows,
                ("product", lambda r: r["product"], "reopened", lambda r: str(r["reopened"])),
                ("False", "True"),
            ),
        )
    )
    summary = (
        f"SLA breach rate {_over_sla(rows)} overall. Drivers found: channel (email "
        f"{_over_sla(rows, lambda r: r['channel'] == 'email')} vs chat "
        f"{_over_sla(rows, lambda r: r['channel'] == 'chat')}, phone "
        f"{_over_sla(rows, lambda r: r['channel'] == 'phone')}); reopened tickets "
        f"{_over_sla(rows, lambda r: r['reopened'])} vs {_over_sla(rows, lambda r: not r['reopened'])}; "
        f"api product {_over_sla(rows, lambda r: r['product'] == 'api')} and reopens twice as often; "
        "priority works as intended (urgent rarely breaches); weekend-created tickets "
        f"{_over_sla(rows, lambda r: r['day'] % 7 in (5, 6))}. First-response time mostly mirrors the "
        "channel (email is slow to answer), with a smaller effect within each channel."
    )
    taskstate = {
        "goal": "explain SLA breaches (resolution > 24 h) in Q1 tickets",
        "done": ["overview", "single-factor cuts", "channel x first response", "product x reopened"],
        "next": ["log-linear model of resolution_h", "rank fixable segments by breached tickets"],
    }
    w.tools(checkpoint_call(summary, taskstate))


def _checkpoint_modelling(w: Writer, rows: list[dict[str, Any]]) -> None:
    w.tools(
        python(
            "import numpy as np, statsmodels.formula.api as smf\n"
            "df['log_h'] = np.log(df['resolution_h'])\n"
            "m = smf.ols('log_h ~ C(channel) + C(product) + C(priority) + reopened + "
            "np.log1p(first_response_min) + C(created)', df).fit()\n"
            "print(np.exp(m.params).round(2))",
            _model_table(rows),
        )
    )
    w.tools(
        python(
            "seg = df[df['over_sla']].groupby(['channel', 'product']).size().sort_values(ascending=False)\n"
            "print(seg.head(6))",
            _top_segments(rows),
        )
    )


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gauss-Jordan elimination with partial pivoting (the normal equations are small and well posed)."""
    size = len(vector)
    rows = [list(map(float, r)) + [float(v)] for r, v in zip(matrix, vector, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def _model_table(rows: list[dict[str, Any]]) -> str:
    """exp(coefficients) of an OLS fit of log(resolution_h), as statsmodels would name them."""
    terms: list[tuple[str, Callable[[dict], float]]] = [("Intercept", lambda r: 1.0)]
    for column, values in (("channel", CHANNELS), ("product", PRODUCTS), ("priority", PRIORITIES)):
        for value in sorted(values)[1:]:
            terms.append((f"C({column})[T.{value}]", lambda r, c=column, v=value: float(r[c] == v)))
    terms += [
        ("reopened[T.True]", lambda r: float(r["reopened"])),
        ("C(created)[T.weekend]", lambda r: float(r["day"] % 7 in (5, 6))),
        ("np.log1p(first_response_min)", lambda r: math.log1p(r["first_response_min"])),
    ]
    x = [[f(r) for _, f in terms] for r in rows]
    y = [math.log(r["resolution_h"]) for r in rows]
    xtx = [[sum(a[i] * a[j] for a in x) for j in range(len(terms))] for i in range(len(terms))]
    xty = [sum(a[i] * b for a, b in zip(x, y, strict=True)) for i in range(len(terms))]
    params = _solve(xtx, xty)
    width = max(len(name) for name, _ in terms) + 4
    lines = [f"{name:<{width}s}{math.exp(p):.2f}" for (name, _), p in zip(terms, params, strict=True)]
    return "\n".join(lines) + "\ndtype: float64"


def _top_segments(rows: list[dict[str, Any]]) -> str:
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        if r["resolution_h"] > 24:
            counts[(r["channel"], r["product"])] = counts.get((r["channel"], r["product"]), 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
    lines = ["channel  product   "]
    previous = None
    for (channel, product), n in ranked:
        shown = channel if channel != previous else ""
        previous = channel
        lines.append(f"{shown:<9s}{product:<12s}{n:5d}")
    return "\n".join(lines) + "\ndtype: int64"


# -- 2. long_chat_overflow ------------------------------------------------------------------------


def _monthly_breaches(rows: list[dict[str, Any]]) -> str:
    lines = ["month      n  over_sla"]
    for month, (low, high) in (("2024-01", (0, 31)), ("2024-02", (31, 60)), ("2024-03", (60, 91))):
        chosen = [r for r in rows if low <= r["day"] < high]
        lines.append(
            f"{month} {len(chosen):6d}  {_over_sla(rows, lambda r, a=low, b=high: a <= r['day'] < b):>8s}"
        )
    return "\n".join(lines)


def _csat_by_channel(rows: list[dict[str, Any]]) -> str:
    lines = ["         count  mean", "channel"]
    for channel in sorted(CHANNELS):
        scores = [r["csat"] for r in rows if r["channel"] == channel and r["csat"] is not None]
        lines.append(f"{channel:<9s}{len(scores):5d}  {statistics.fmean(scores):.2f}")
    return "\n".join(lines)


def _reopen_rates(rows: list[dict[str, Any]]) -> str:
    lines = ["product       size  sum    mean"]
    for product in sorted(PRODUCTS):
        flags = [r["reopened"] for r in rows if r["product"] == product]
        lines.append(f"{product:<12s} {len(flags):5d} {sum(flags):4d} {sum(flags) / len(flags):7.3f}")
    return "\n".join(lines)


def _reopened_breaches(rows: list[dict[str, Any]]) -> str:
    again = [r for r in rows if r["reopened"]]
    lines = ["product       reopened  over_sla"]
    for product in sorted(PRODUCTS):
        lines.append(
            f"{product:<12s} {sum(r['product'] == product for r in again):9d}  "
            f"{_over_sla(again, lambda r, p=product: r['product'] == p):>8s}"
        )
    return "\n".join(lines) + f"\nall          {len(again):9d}  {_over_sla(again):>8s}"


def _first_response_by_channel(rows: list[dict[str, Any]], low: int, high: int) -> str:
    lines = ["channel   median_first_response_min"]
    for channel in CHANNELS:
        values = [r["first_response_min"] for r in rows if r["channel"] == channel and low <= r["day"] < high]
        lines.append(f"{channel:<9s} {statistics.median(values):10.1f}")
    return "\n".join(lines)


ATTRIBUTION_METHOD = (
    "Here is the method in full, so you can defend each step.\n\n"
    "1. Define the outcome precisely. A breach is a ticket whose resolution time exceeds 24 hours, "
    "measured from creation to the final 'solved' status. Reopened tickets keep their original creation "
    "time, so a reopen counts against the SLA. This matches the contract wording, and it is the "
    "definition finance already uses.\n\n"
    "2. Look at one factor at a time, but only as a first pass. For channel, product, priority, reopen "
    "status, first-response time and day of creation I compute the breach rate per group together with "
    "the group size. Small groups (under 50 tickets) get flagged, because a rate of 40% on 20 tickets is "
    "noise.\n\n"
    "3. Check for confounding before attributing anything. The factors are not independent: email "
    "tickets get slower first responses, API tickets are reopened twice as often, and weekend tickets are "
    "more often email. A single-factor table would credit the same breaches to several causes. I "
    "therefore split the breach rate by pairs of factors (channel by first-response bucket, product by "
    "reopen) and see whether an effect survives inside each group.\n\n"
    "4. Fit one model with all factors together. A linear model of log(resolution hours) with channel, "
    "product, priority, reopen, weekend and log first-response time gives each factor a multiplicative "
    "effect while holding the others fixed: for example 'email tickets take about 2x as long as chat "
    "tickets of the same product, priority and reopen status'. Logs are needed because resolution times "
    "are heavily skewed; a model on raw hours would be dominated by a few tickets of 200+ hours.\n\n"
    "5. Translate effects into breaches you could avoid. For each factor I ask: if this group behaved "
    "like the reference group, how many of Q1's breaches would disappear? That is the number a manager "
    "can act on, and it stops small but dramatic effects from stealing the slide.\n\n"
    "6. State the limits. This is observational data: we see associations, not causes. Priority is set "
    "by agents and may reflect how hard a ticket looked; CSAT is answered by only six in ten customers, "
    "mostly the very happy and the very unhappy; and Q1 contains the January billing migration, which may "
    "not repeat. I would present the numbers as 'where to look first', not as proof."
)


def long_chat_overflow() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = _tickets()
    w = Writer("long_chat_overflow")
    w.system(TICKETS_SYSTEM)
    w.user(
        "I'm preparing the Q1 support review for Thursday, using data/tickets_q1.csv. I'll ask a lot of "
        "small things; keep answers short unless I ask for detail. For context, this is last quarter's "
        "outline, which the director liked:\n\n"
        "1. Headline: volume, SLA breach rate, CSAT, each with the change from the previous quarter.\n"
        "2. Volume by channel and product, with the three biggest movers called out.\n"
        "3. Speed: median first response and median resolution per channel, plus the 90th percentile.\n"
        "4. Quality: reopen rate per product, CSAT per channel and the CSAT response rate.\n"
        "5. What drove breaches this quarter, with one chart and no more than three causes.\n"
        "6. Recommendations: two or three, each with an owner and a date.\n"
        "7. Appendix: definitions (what counts as resolved, how the SLA clock runs on weekends)."
    )
    w.answer("Sounds good. I have the export loaded: 1,200 tickets, January to March. Ask away.")
    w.user("What do support reviews usually show? I don't want to miss the standard metrics.")
    w.answer(
        "The usual set: volume by channel and product, first-response time, resolution time against "
        "the SLA (breach rate), reopen rate, and CSAT with its response rate. Trends by month, and one "
        "slide on the biggest driver of breaches with a recommendation."
    )
    w.user("Compute the SLA breach rate per month.")
    w.tools(
        python(
            "df['month'] = df['created_at'].dt.to_period('M')\ndf['over_sla'] = df['resolution_h'] > 24\n"
            "print(df.groupby('month')['over_sla'].agg(['size', 'mean']))",
            _monthly_breaches(rows),
        )
    )
    w.answer(f"Breach rate by month is in the table; the quarter as a whole is {_over_sla(rows)}.")
    w.user(f"Is {_over_sla(rows)} bad?")
    w.answer(
        "For a 24-hour resolution SLA in B2B software it is on the high side: teams that publish their "
        "numbers usually sit between 10 and 20%. It is not alarming, but the review should show a plan "
        "to bring it down, and which part of it you can control."
    )
    w.user(
        "Explain in detail how you would attribute breaches to causes. My director will push back on "
        "the method, so I need to be able to defend every step."
    )
    w.answer(ATTRIBUTION_METHOD)
    w.user("Give me the short version of that for a slide.")
    w.answer(
        "Breaches = tickets over 24 h. We compared groups, checked overlaps (email is also slow to "
        "answer; API is also reopened more), then fitted one model with all factors to get each "
        "factor's own effect, and counted avoidable breaches. Associations, not proof."
    )
    w.user("Which channel has the worst CSAT?")
    w.tools(
        python("print(df.groupby('channel')['csat'].agg(['count', 'mean']).round(2))", _csat_by_channel(rows))
    )
    w.answer("Email, clearly: the lowest mean CSAT of the three channels (table above).")
    w.user("Why might email CSAT be lower? Just hypotheses.")
    w.answer(
        "Three likely ones: email tickets wait longest for a first answer, they take about twice as long "
        "to resolve, and email attracts the complex cases that customers could not solve in chat. The "
        "first two are in our data; the third would need a look at ticket categories."
    )
    w.user("Check how many tickets were reopened per product, and how often reopened tickets breach.")
    w.tools(
        python("print(df.groupby('product')['reopened'].agg(['size', 'sum', 'mean']))", _reopen_rates(rows))
    )
    w.tools(
        python(
            "again = df[df['reopened']]\nprint(again.groupby('product')['over_sla'].agg(['size', 'mean']))",
            _reopened_breaches(rows),
        )
    )
    w.answer(
        "The API product stands out: it is reopened about twice as often as the others, and roughly "
        "half of all reopened tickets end up breaching the SLA."
    )
    w.user("So what should I recommend?")
    w.answer(
        "Two things. First, faster first responses on email: a triage rota or auto-acknowledge with a "
        "real owner, because email is where most breaches are. Second, a root-cause review of API "
        "reopens with the API team: fewer reopens cut breaches on the product that breaches most."
    )
    w.user("Draft the speaker notes for that recommendations slide.")
    w.answer(
        "Speaker notes: 'Most of our SLA breaches come from two places. Email tickets wait longer for a "
        "first answer and take about twice as long to resolve as chat tickets, even for the same product "
        "and priority. We propose a daily email triage rota starting in May. Second, API tickets come back "
        "twice as often as other products, and a reopened ticket breaches in about half the cases. We "
        "want a monthly review of reopened API tickets with the API team. Together these target the "
        "majority of Q1 breaches; we will report the effect in the Q2 review.'"
    )
    w.user("One more number for the appendix: median first response per channel, March vs January.")
    w.tools(
        python(
            "march = df[df['created_at'].dt.month == 3]\n"
            "print(march.groupby('channel')['first_response_min'].median())",
            _first_response_by_channel(rows, 60, 91),
        )
    )
    w.tools(
        python(
            "january = df[df['created_at'].dt.month == 1]\n"
            "print(january.groupby('channel')['first_response_min'].median())",
            _first_response_by_channel(rows, 0, 31),
        )
    )
    policy = {"budget": {"maxTokens": 2700, "reservedForResponse": 400}}
    head = header(
        "Long chat over a small budget: working memory P1-P3",
        "A 12-turn analysis chat under a 2,300-token budget. Working memory fills 70% of it: P1 keeps "
        "the current turn's tool groups (and the newest older ones), P2 keeps text newest first and "
        "skips what does not fit, P3 adds old tool groups (compressed lines) if room is left.\n"
        "The seed doc's P4 'circular fill' does not exist in linnkit. Move workingMemoryBudgetPercentage "
        "or maxTokens and watch where P2 stops; the long method answer is skipped while older short "
        "messages still fit.",
        policy,
        model_id="gpt-4.1",
    )
    return head, w.messages


# -- 1. short_chat --------------------------------------------------------------------------------


def short_chat() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    w = Writer("short_chat")
    w.system(
        "You are a senior Python engineer answering questions from a teammate. Be concrete, show short "
        "code, and say when something depends on the Python version."
    )
    w.user("What's the practical difference between asyncio.gather and asyncio.TaskGroup?")
    w.answer(
        "Both run awaitables concurrently; they differ in what happens when one fails.\n\n"
        "- `gather(*aws)` returns results in order. If one raises, the exception propagates to you, "
        "but the other tasks keep running unless you cancel them. With `return_exceptions=True` you "
        "get exceptions as values instead.\n"
        "- `async with asyncio.TaskGroup() as tg:` (Python 3.11+) cancels the remaining tasks as soon "
        "as one fails, waits for them, and raises an `ExceptionGroup` with every failure.\n\n"
        "Rule of thumb: TaskGroup when the tasks belong together and a failure should stop the rest; "
        "gather with `return_exceptions=True` when you want best-effort results."
    )
    w.user("How do I catch just the timeouts from a TaskGroup then?")
    w.answer(
        "Use `except*`, which matches inside the group:\n\n"
        "```python\ntry:\n    async with asyncio.TaskGroup() as tg:\n        for url in urls:\n"
        "            tg.create_task(fetch(url))\nexcept* TimeoutError as group:\n"
        "    log.warning('%d fetches timed out', len(group.exceptions))\n```\n\n"
        "Other exception types in the same group still propagate. Note that `asyncio.TimeoutError` is an "
        "alias of the builtin `TimeoutError` since 3.11, so one clause catches both."
    )
    w.user("Is there a limit on how many tasks a TaskGroup runs at once? I have ~5,000 URLs.")
    w.tools(
        search(
            "asyncio TaskGroup limit concurrency semaphore python docs",
            [
                (
                    "Coroutines and Tasks — Python 3.12 documentation",
                    "https://docs.python.org/3/library/asyncio-task.html#task-groups",
                    "An asynchronous context manager holding a group of tasks. Tasks can be added to the "
                    "group using create_task(). All tasks are awaited when the context manager exits.",
                ),
                (
                    "Synchronization Primitives — asyncio.Semaphore",
                    "https://docs.python.org/3/library/asyncio-sync.html#asyncio.Semaphore",
                    "A semaphore manages an internal counter which is decremented by each acquire() "
                    "call and incremented by each release() call.",
                ),
            ],
        )
    )
    w.answer(
        "No: a TaskGroup starts every task you create right away, so 5,000 `create_task` calls mean "
        "5,000 concurrent fetches. Bound it with a semaphore:\n\n"
        "```python\nsem = asyncio.Semaphore(50)\n\nasync def bounded(url):\n    async with sem:\n"
        "        return await fetch(url)\n\nasync with asyncio.TaskGroup() as tg:\n"
        "    tasks = [tg.create_task(bounded(u)) for u in urls]\n```\n\n"
        "If you use httpx, also set `httpx.Limits(max_connections=50)` on the client so the pool agrees "
        "with the semaphore."
    )
    policy = {"budget": {"maxTokens": 8000, "reservedForResponse": 1000}}
    head = header(
        "Short chat: the baseline, nothing dropped",
        "Three questions and answers, one web search: the whole session is far below the budget, so "
        "every message is kept as it is and the wire is the history.\n"
        "Lower budget.maxTokens until working memory starts dropping the oldest answer; that is the "
        "point where the other samples begin.",
        policy,
    )
    return head, w.messages


# -- 5. summarization_trigger ---------------------------------------------------------------------

BROKER_TURNS: list[tuple[str, str]] = [
    (
        "We need a broker for order events: about 400 events per second at peak, three consumers "
        "(billing, search indexing, analytics). Shortlist: Kafka, RabbitMQ, NATS JetStream. Where do I "
        "start?",
        "Start from the consumers, not the broker. Billing needs each event exactly once in effect and "
        "in order per order id; search indexing tolerates duplicates; analytics wants to replay history. "
        "Replay favours a log (Kafka, JetStream streams) over a queue (classic RabbitMQ queues delete "
        "messages once acknowledged). 400 events/s is small for all three, so throughput will not decide "
        "it; operations, ordering and replay will.",
    ),
    (
        "How does ordering work in each of them?",
        "Kafka orders within a partition: key events by order id and every event of one order lands in "
        "one partition, in order. RabbitMQ keeps order within a single queue with one consumer; with "
        "competing consumers or redeliveries, order per order id is not guaranteed. JetStream orders "
        "within a stream; a pull consumer with max_ack_pending=1 preserves it but serialises delivery, "
        "so you would partition by subject (orders.<shard>) to scale.",
    ),
    (
        "And replay? Analytics wants to rebuild its tables from the last 30 days.",
        "Kafka: set retention.ms to 30 days (or compaction by key) and let analytics reset its consumer "
        "group offset to a timestamp. JetStream: a stream with max_age 30d, and a new consumer with "
        "DeliverByStartTime. RabbitMQ: classic queues cannot replay; RabbitMQ Streams (3.9+) can, with "
        "offset-based consumers, but that is a different API from the queues your team knows.",
    ),
    (
        "What about exactly-once for billing?",
        "None of them gives you exactly-once end to end for free. Kafka has idempotent producers and "
        "transactions, which give exactly-once between Kafka topics, not into your billing database. "
        "JetStream has message deduplication on publish (Nats-Msg-Id within a window) and double-ack. "
        "In every case billing should be idempotent itself: store the event id with the charge in the "
        "same database transaction and skip ids it has seen. That is simpler and survives a broker "
        "switch.",
    ),
    (
        "I found a benchmark claiming NATS does 10x Kafka's throughput. Does that matter for us?",
        "Not at 400 events/s. Those benchmarks usually compare core NATS (no persistence) with Kafka "
        "with acks=all, which is not like for like; JetStream with file storage and replicas=3 lands "
        "much closer to Kafka. At your volume a single small node of any of the three idles. Latency "
        "p99 is a better question, and all three are in the low milliseconds on a LAN.",
    ),
    (
        "Operations: we are four backend engineers and no platform team. What does running each cost?",
        "Kafka: since 3.3 KRaft removes ZooKeeper, but you still manage brokers, partitions, retention "
        "and rebalancing; managed Kafka (MSK, Confluent, Aiven) removes most of that at a price. "
        "RabbitMQ: easy to start, quorum queues for durability, but clustering and upgrades need care. "
        "NATS: one static binary, JetStream clustering with Raft built in, the smallest operational "
        "surface of the three. For four engineers without a platform team, managed Kafka or self-hosted "
        "NATS are the realistic options.",
    ),
    (
        "What does managed Kafka cost roughly at our size?",
        "For ~400 events/s of ~1 KB with 30-day retention you store about 1 TB (400 × 1 KB × 86,400 × "
        "30 ≈ 1.04 TB, times the replication factor on the provider's side). Entry tiers of the big "
        "providers start around 200-400 USD per month for a small three-broker cluster, and storage "
        "dominates above that. Self-hosted NATS on three small VMs would be well under 100 USD plus "
        "your time.",
    ),
    (
        "Our stack is Python (FastAPI) and Go. How good are the clients?",
        "Kafka: confluent-kafka-python (librdkafka) is solid but callback-based; aiokafka for asyncio. "
        "Go: franz-go is excellent, confluent-kafka-go needs cgo. NATS: nats.py is asyncio-native and "
        "nats.go is the reference client, both maintained by Synadia. RabbitMQ: aio-pika and "
        "amqp091-go are mature. No blocker anywhere; NATS is the most pleasant in asyncio code.",
    ),
    (
        "Schema evolution: how do we avoid breaking consumers when the order event changes?",
        "Use a schema registry or at least versioned schemas in the repo. With Kafka the Confluent "
        "Schema Registry (or Apicurio) enforces backward compatibility on publish. With NATS there is "
        "no registry; keep JSON Schema or protobuf definitions in a shared repo and check compatibility "
        "in CI. Whatever you pick: only add optional fields, never rename, and put an event version in "
        "every message.",
    ),
    (
        "What about dead letters when billing can't process an event?",
        "Kafka has no built-in DLQ: the consumer publishes failed events to an orders.dlq topic after N "
        "retries (many frameworks do this for you). RabbitMQ has dead-letter exchanges built in. "
        "JetStream redelivers up to max_deliver, then emits an advisory you can subscribe to and copy "
        "the message to a DLQ stream. In all cases alert on DLQ depth, not on individual failures.",
    ),
    (
        "Summarise the trade-off in three bullets for my tech lead.",
        "- Kafka (managed): the standard for event logs; best ecosystem, replay and schema tooling; "
        "highest cost and most concepts to learn.\n- NATS JetStream (self-hosted): smallest ops "
        "footprint, replay and dedup built in, great Go/Python clients; smaller ecosystem, no schema "
        "registry.\n- RabbitMQ: great work queue, weak fit for replay unless you adopt Streams; skip "
        "it for this use case.",
    ),
    (
        "If we start with NATS and outgrow it, how painful is a move to Kafka later?",
        "Moderate if you keep the broker behind a thin publish/subscribe interface and billing stays "
        "idempotent. The painful parts are replay semantics (stream sequence vs partition offsets) and "
        "ordering keys; design subjects as orders.<shard> now so they map onto Kafka partitions later. "
        "A bridge (nats-kafka connector) lets you run both during the move.",
    ),
]


def summarization_trigger() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    w = Writer("summarization_trigger")
    w.system(
        "You are a pragmatic staff engineer helping a small team choose infrastructure. Give direct "
        "recommendations with the reasoning, numbers where they matter, and flag uncertain claims."
    )
    for question, reply in BROKER_TURNS:
        w.user(question)
        w.answer(reply)
    w.user("OK. Draft the decision record (ADR) for NATS JetStream with the fallback plan.")
    policy = {
        "budget": {"maxTokens": 3000, "reservedForResponse": 500},
        "summarization": {"triggerThreshold": 0.5, "oldestMessagesPercentage": 0.75},
    }
    head = header(
        "Summarization trigger: the oldest turns become one summary",
        "A long research chat about message brokers. With triggerThreshold 0.5 the kept context passes "
        "both of linnkit's checks (kept tokens ≥ 0.9 × threshold, then a tiktoken count of the contents "
        "alone ≥ threshold) and the oldest 75% of the conversation is replaced by one history_summary.\n"
        "Raise triggerThreshold step by step: first the content-only count misses the threshold (stage "
        "2), then the kept tokens miss 0.9 × threshold (stage 1), and the summary disappears.",
        policy,
    )
    return head, w.messages


# -- 6. fences_showcase ---------------------------------------------------------------------------

FENCE_DESCRIPTORS: list[dict[str, Any]] = [
    {"kind": "workspace-rules", "llmRole": "system", "placement": "after-system", "lifetime": "persisted"},
    {
        "kind": "memory-context",
        "llmRole": "user",
        "placement": "before-current-user",
        "lifetime": "persisted",
        "mustKeep": True,
        "maxBudgetFraction": 0.05,
    },
    {"kind": "local-time", "llmRole": "user", "placement": "before-current-user", "lifetime": "turn-only"},
    {"kind": "attached-file", "llmRole": "user", "placement": "after-current-user", "lifetime": "turn-only"},
    {
        "kind": "tool-hint",
        "llmRole": "user",
        "placement": "after-last-tool-result",
        "lifetime": "turn-only",
        "formatter": "<hint>{content}</hint>",
    },
]

PROJECT_MEMORY = [
    "2024-05-10: staging poller runs every 15 minutes from stg-poller-1 (systemd unit feedcache-staging).",
    "2024-05-08: the team prefers small PRs; one behaviour change per PR, tests in the same PR.",
    "2024-05-06: never run the poller against production feeds from a laptop; use staging/feeds.csv.",
    "2024-05-03: feeds.csv has 240 feeds; 37 hosts; the docs feed moved from RSS to Atom on 2024-04-29.",
    "2024-04-30: release 0.4.2 shipped (Atom ids as guid, poll summary log line).",
    "2024-04-26: SQLite file lives at /var/lib/feedcache/staging.sqlite; back it up before migrations.",
    "2024-04-24: decided against aiohttp; httpx is the only HTTP client (sync for now, async later).",
    "2024-04-22: logging goes to journald; INFO for summaries, WARNING for per-feed problems.",
    "2024-04-19: Lena owns the scheduler, Tom owns parsing; ask them before changing public functions.",
    "2024-04-17: CI runs pytest and ruff on Python 3.11 and 3.12; both must be green to merge.",
    "2024-04-15: the status page feed (status.example-11.org) only sends Last-Modified, no ETag.",
    "2024-04-12: 0.4.1 stores validators per URL, not per host (two feeds on one host broke it).",
    "2024-04-10: egress budget for the poller is 50 GB per month; alert at 80%.",
    "2024-04-08: defusedxml is required; plain ElementTree was flagged in the security review.",
    "2024-04-05: timeouts are 10 s per request; the scheduler must never block on one slow feed.",
    "2024-04-03: feed bodies are not stored, only items (guid, title, published).",
    "2024-03-28: duplicate items are acceptable for at most one poll after a feed migration.",
    "2024-03-26: user-agent must identify us with a contact URL (some hosts block anonymous bots).",
    "2024-03-22: do not follow more than 5 redirects; httpx default is fine.",
    "2024-03-20: metrics are out of scope until the Grafana stack is ready (Q3).",
    "2024-03-18: Python 3.13 support waits for defusedxml wheels.",
    "2024-03-15: code style: ruff defaults plus line length 100, type hints on public functions.",
    "2024-03-12: tests must not touch the network; fake http.get with monkeypatch.",
    "2024-03-08: the CLI prints one line per feed: status, new items, URL.",
]


def fences_showcase() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    repo = Repo(FEEDCACHE_FILES, "/srv/feedcache")
    w = Writer("fences_showcase")
    w.system(FEEDCACHE_SYSTEM)
    w.fence(
        "workspace-rules",
        "system",
        "after-system",
        "Run `python -m pytest -q` and `ruff check .` after every change. Never edit files under "
        "staging/. Commit messages in the imperative mood.",
        {"source": "AGENTS.md"},
    )
    w.fence(
        "memory-context",
        "user",
        "before-current-user",
        "Project memory (curated by the team, newest first):\n" + "\n".join(f"- {m}" for m in PROJECT_MEMORY),
        {"scope": "repo", "items": len(PROJECT_MEMORY)},
    )
    w.fence("local-time", "user", "before-current-user", "2024-05-13 16:40 CEST", {"tz": "Europe/Berlin"})
    w.user("Why does `feedcache poll staging/feeds.csv` print nothing at all for some feeds?")
    w.fence(
        "attached-file",
        "user",
        "after-current-user",
        "$ feedcache poll staging/feeds.csv | wc -l\n231\n$ wc -l < staging/feeds.csv\n241",
        {"name": "poll-output.txt"},
    )
    w.tools(repo.read("feedcache/cli.py"))
    w.tools(repo.read("feedcache/scheduler.py"))
    w.answer(
        "Nine feeds are missing from the output (231 lines for 240 feeds). `poll_all` in "
        "`feedcache/scheduler.py` catches `httpx.TimeoutException` and logs it, but then has "
        "`except Exception: pass`: any other error (a DNS failure, a TLS error, a parser crash) drops the "
        "feed without a trace, and the CLI only prints the results it got back."
    )
    w.fence("local-time", "user", "before-current-user", "2024-05-14 09:05 CEST", {"tz": "Europe/Berlin"})
    w.user("Make poll_all log the failing URL and the exception instead of swallowing it, and add a test.")
    w.fence(
        "attached-file",
        "user",
        "after-current-user",
        "FC-112: Silent feed failures\nReported by: Lena\nSome feeds never update and nothing shows up "
        "in the logs. Expected: one WARNING per failing feed with the URL and the error.",
        {"name": "FC-112.md", "tracker": "linear"},
    )
    w.tools(repo.read("tests/test_scheduler.py"))
    w.tools(
        repo.edit(
            "feedcache/scheduler.py",
            "        except Exception:\n            pass\n",
            '        except Exception:\n            log.warning("poll failed: %s", url, exc_info=True)\n',
        )
    )
    w.tools(
        repo.append(
            "tests/test_scheduler.py",
            "\n\ndef test_broken_feed_is_logged(caplog):\n"
            '    poll_all(FlakyFetcher(), ["https://broken/feed"])\n'
            '    assert "poll failed: https://broken/feed" in caplog.text\n',
        )
    )
    w.tools(shell("python -m pytest -q", _pytest(5, seconds=0.2)))
    w.fence(
        "tool-hint",
        "user",
        "after-last-tool-result",
        "Tests pass. AGENTS.md also asks for `ruff check .` before you report back.",
    )
    policy = {"budget": {"maxTokens": 8000, "reservedForResponse": 1000}}
    head = header(
        "Fences: four placements, two lifetimes, one over its budget share",
        "Host context arrives as fences: workspace rules join the system prompt, this turn's local time "
        "and attachment are merged into the user request, the last turn's turn-only fences are removed, "
        "the persisted project memory stays and, being mustKeep with maxBudgetFraction 0.05, is cut to "
        "5% of the budget; a tool hint follows the last tool result.\n"
        "Raise memory-context's maxBudgetFraction (or lower maxTokens) and watch the cut move; make "
        "local-time persisted and the old time stays in history.",
        policy,
        fences=FENCE_DESCRIPTORS,
    )
    return head, w.messages


# -- 7. max_steps_streak --------------------------------------------------------------------------

HTTPX_EXCEPTIONS_DOC = """\
# Exceptions - HTTPX

HTTPX raises exceptions in the following hierarchy:

* HTTPError
  * RequestError
    * TransportError
      * TimeoutException
        * ConnectTimeout
        * ReadTimeout
        * WriteTimeout
        * PoolTimeout
      * NetworkError
        * ConnectError
        * ReadError
        * WriteError
        * CloseError
      * ProtocolError
        * LocalProtocolError
        * RemoteProtocolError
      * ProxyError
      * UnsupportedProtocol
    * DecodingError
    * TooManyRedirects
  * HTTPStatusError
* InvalidURL
* CookieConflict
* StreamError

`response.raise_for_status()` raises HTTPStatusError for 4xx and 5xx responses; nothing else in
HTTPX raises for an error status code."""

STEPS_TOOLS = ["list_dir", "read_file", "grep", "run_shell", "web_search", "web_fetch", "context_checkpoint"]


def max_steps_streak() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    repo = Repo(FEEDCACHE_FILES, "/srv/feedcache")
    w = Writer("max_steps_streak")
    w.system(FEEDCACHE_SYSTEM)
    w.user("Quick one: does feedcache retry a feed when a request fails?")
    w.tools(repo.grep(r"retr(y|ies)|backoff"))
    w.answer("No. There is no retry or backoff anywhere; a failed feed simply waits for the next poll.")
    w.user(
        "We had feeds silently stop updating last week. Audit the error handling: list every place where "
        "an exception is caught, logged or swallowed in feedcache/ and tests/, with a one-line risk note "
        "each, plus what httpx can raise that nobody handles. Read, don't change anything."
    )
    _audit_streak(w, repo)
    policy = {
        "budget": {"maxTokens": 16000, "reservedForResponse": 2000},
        "systemReminder": {"thresholds": {"toolCallStreak": 10, "lastStepsHintThreshold": 6}},
    }
    head = header(
        "Near maxSteps: a long tool streak and the step reminders",
        "An audit run of 18 tool calls in a row with maxSteps 40 (20 LLM calls). Replayed step by step, "
        "the reminders appear where linnkit puts them: the streak reminder at the 10th call in a row, "
        "the periodic reflection at step 30, the last-steps hint from 6 steps before the end, and the "
        "budget warning from 90% of maxSteps (context_checkpoint is available).\n"
        "Step through the replay; change thresholds.toolCallStreak or lastStepsHintThreshold and watch "
        "the reminders move. Reminders are appended to the last wire message and never saved.",
        policy,
        max_steps=40,
        availableTools=STEPS_TOOLS,
    )
    return head, w.messages


def _audit_streak(w: Writer, repo: Repo) -> None:
    w.tools(repo.list_dir("feedcache"))
    w.tools(repo.grep(r"except|raise", "feedcache"))
    for path in ("feedcache/scheduler.py", "feedcache/fetcher.py", "feedcache/http.py", "feedcache/store.py"):
        w.tools(repo.read(path))
    w.tools(repo.read("feedcache/parse.py"))
    w.tools(repo.read("feedcache/cli.py"))
    w.tools(repo.grep(r"log\.(debug|info|warning|error|exception)"))
    w.tools(repo.grep(r"except|raise|pytest\.raises", "tests"))
    w.tools(repo.read("tests/test_scheduler.py"))
    w.tools(shell("python -m pytest -q tests/test_scheduler.py", _pytest(2, seconds=0.08)))
    w.tools(
        search(
            "httpx exception hierarchy TransportError TimeoutException HTTPStatusError",
            [
                (
                    "Exceptions - HTTPX",
                    "https://www.python-httpx.org/exceptions/",
                    "HTTPX raises exceptions in the following hierarchy: HTTPError, RequestError, "
                    "TransportError, TimeoutException…",
                ),
            ],
        )
    )
    w.tools(fetch("https://www.python-httpx.org/exceptions/", HTTPX_EXCEPTIONS_DOC))
    w.tools(
        shell(
            'python -c "import sqlite3; print(sqlite3.OperationalError.__mro__)"',
            "(<class 'sqlite3.OperationalError'>, <class 'sqlite3.DatabaseError'>, "
            "<class 'sqlite3.Error'>, <class 'Exception'>, <class 'BaseException'>, <class 'object'>)",
        )
    )
    w.tools(
        shell(
            "journalctl -u feedcache-staging --since '2024-05-06' --no-pager | grep -c 'timeout:'",
            "14",
        )
    )
    w.tools(
        shell(
            "git log --oneline -4 -- feedcache/scheduler.py",
            "3e8a1f2 scheduler: never let one feed stop the loop\n"
            "a4c90d1 scheduler: log a summary line per poll\n"
            "77b2e05 scheduler: sleep for the rest of the interval\n0f3e6a9 initial scheduler",
        )
    )
    w.tools(
        shell(
            "git show 3e8a1f2 --stat --format='%an %ad%n%s%n%b' --date=short",
            "Lena Vogt 2024-04-02\nscheduler: never let one feed stop the loop\n"
            "One broken feed (invalid XML) crashed the whole poll. Catch everything per feed.\n\n"
            " feedcache/scheduler.py | 2 ++\n 1 file changed, 2 insertions(+)",
        )
    )


# -- 8. chinese_session ---------------------------------------------------------------------------

ZH_SYSTEM = (
    "你是一名资深运维工程师助手，负责排查线上故障。请先用工具收集证据再下结论，回答使用中文，"
    "给出的命令和配置要能直接执行，并说明每个改动的风险。"
)

ZH_ERROR_LOG = """\
2024/05/13 21:02:17 [error] 2231#2231: *918274 upstream prematurely closed connection while reading \
response header from upstream, request: "POST /api/order/create HTTP/1.1", upstream: "http://10.8.5.14:8000"
2024/05/13 21:02:18 [error] 2232#2232: *918302 recv() failed (104: Connection reset by peer) while \
reading response header from upstream, request: "POST /api/order/create HTTP/1.1", upstream: "http://10.8.5.15:8000"""

ZH_NGINX_CONF = """\
upstream order_backend {
    server 10.8.5.14:8000;
    server 10.8.5.15:8000;
    keepalive 64;
    keepalive_timeout 75s;
}"""

ZH_TICKETS = [
    ("21:04", "App", "点了提交订单一直转圈，最后提示“网络异常，请稍后再试”，换了 4G 也一样。"),
    ("21:06", "小程序", "下单失败三次，购物车里的东西还在，但优惠券显示已使用，钱没扣。"),
    ("21:09", "网页", "结算页面报错 502 Bad Gateway，刷新后有时候又能成功。"),
    ("21:12", "App", "同一个订单提交了两次，第一次说失败，第二次成功了，会不会重复扣款？"),
    ("21:15", "小程序", "限时秒杀下单一直失败，活动结束了才恢复，要求补偿。"),
    ("21:21", "App", "提交订单提示服务器繁忙，大概十次里有一两次失败。"),
    ("21:33", "网页", "支付完成后订单页面空白，过了几分钟才显示订单。"),
]

ONCALL_NOTES = """\
# 值班记录 2024-05-13（晚班）

- 20:40 订单服务发布 v3.18.0（发布人：王磊），变更内容：接入统一发布模板，配置文件改为模板生成。
- 21:03 监控出现零星 502，比例约 0.3%，当时判断为流量波动，未处理。
- 21:10 告警：下单接口 502 比例 4.1%，客服群反馈大量“下单失败”。
- 21:14 检查订单服务：CPU 35%，内存正常，没有重启，数据库连接池正常。
- 21:20 检查 Nginx：错误日志大量 upstream prematurely closed connection，怀疑长连接问题。
- 21:35 对比发布前后配置，发现 gunicorn keepalive 从 120 变成 5，手工回滚配置并滚动重启。
- 21:42 502 比例回落到 0，故障恢复。
- 待办：确认是否有重复订单；复盘发布模板为何覆盖了业务配置。"""

ZH_GUNICORN_CONF = """\
# gunicorn.conf.py（订单服务，2024-05-13 20:40 上线的新版本）
bind = "0.0.0.0:8000"
workers = 8
worker_class = "uvicorn.workers.UvicornWorker"
keepalive = 5          # 旧版本为 120，本次上线时被默认模板覆盖
timeout = 30
max_requests = 2000
max_requests_jitter = 200"""

ZH_ARTICLE = """\
# Nginx 反向代理出现 502：upstream prematurely closed connection 的常见原因

在 Nginx 与后端之间开启长连接（upstream keepalive）之后，偶发的 502 往往不是后端"挂了"，而是两端对
空闲连接的超时时间不一致造成的竞争。

**典型场景**：Nginx 的 `keepalive_timeout` 比后端（gunicorn、uwsgi、Tomcat 等）的 keep-alive 超时更长。
后端在连接空闲 5 秒后主动关闭，而 Nginx 认为这条连接还能用，恰好在关闭的瞬间把新请求写了进去。后端
收到请求时连接已经进入关闭流程，于是 Nginx 读响应头时看到对端关闭，记录
`upstream prematurely closed connection` 或 `Connection reset by peer`，并向客户端返回 502。

**为什么是"偶发"**：只有请求恰好落在后端关闭空闲连接的那一刻才会出错，所以错误率和流量、空闲间隔
有关。流量高峰时连接复用频繁，反而不容易触发；流量刚开始下降、连接开始空闲时最容易出现。

**解决办法**：
1. 让后端的 keep-alive 超时**大于** Nginx 的 `keepalive_timeout`，由 Nginx 先关闭空闲连接；
2. 对幂等请求开启 `proxy_next_upstream error timeout`，失败时换一台后端重试；非幂等的 POST 请求不要
   盲目重试，否则可能重复下单；
3. 监控 502 比例，并在发布流程里检查超时相关配置有没有被模板覆盖。"""

ZH_TURNS = [
    (
        "那怎么修？给出具体的配置修改，并说明每个改动的风险。",
        "建议分两步修，先止血、再加固。\n\n"
        "**第一步（立即）：恢复后端的 keep-alive 超时**\n"
        "把 `gunicorn.conf.py` 里的 `keepalive = 5` 改回 `keepalive = 120`，让后端的空闲超时明显大于 Nginx "
        "的 `keepalive_timeout 75s`。这样空闲连接总是由 Nginx 先关闭，不会再出现 Nginx 往一条正在关闭的连接"
        "上写请求的情况。风险很小：每个 worker 会多保持一些空闲连接，按现在 8 个 worker、Nginx 侧最多 64 条"
        "长连接计算，内存开销可以忽略。\n\n"
        "**第二步（本周内）：收紧 Nginx 侧并加监控**\n"
        "1. 把 Nginx 的 `keepalive_timeout` 调到 60s，给两端留出足够的差值；\n"
        "2. 只对 GET 等幂等请求配置 `proxy_next_upstream error timeout http_502`。`/api/order/create` 是 "
        "POST，千万不要开重试，否则一次超时就可能生成两张订单；\n"
        "3. 在发布流水线里加一条检查：`keepalive` 小于 Nginx `keepalive_timeout` 时直接让发布失败。\n\n"
        "第一步改完后需要滚动重启订单服务，建议在低峰期（凌晨 2 点以后）进行。",
    ),
    (
        "顺便把这次故障写成复盘报告里的“时间线”和“根因”两节，给非技术同事也能看懂。",
        "**时间线（2024 年 5 月 13 日）**\n"
        "- 20:40 订单服务发布新版本，发布模板把后端连接的空闲超时从 120 秒改成了 5 秒；\n"
        "- 21:02 晚高峰开始回落，下单接口开始出现 502 错误；\n"
        "- 21:10 监控告警，502 比例升到约 4%，值班同学开始排查；\n"
        "- 21:35 定位到超时配置不一致，回滚订单服务配置；\n"
        "- 21:42 502 比例回到 0，故障恢复，持续约 40 分钟。\n\n"
        "**根因**\n"
        "网关（Nginx）和订单服务之间会复用同一条网络连接来传递多个请求，就像两个人约好一条电话线不挂断，"
        "有事就直接说。双方各自有一个“多久没说话就挂电话”的规则：网关等 75 秒，订单服务原本等 120 秒。"
        "这次发布把订单服务的等待时间改成了 5 秒，于是订单服务经常在网关正准备说话的那一刻挂断电话，"
        "网关的请求落空，用户就看到了“下单失败”。配置是被发布模板的默认值悄悄覆盖的，评审时没有人注意到。",
    ),
]


def chinese_session() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    w = Writer("chinese_session")
    w.system(ZH_SYSTEM)
    w.user("昨晚 21 点开始，商城的下单接口大量返回 502，持续了大概 40 分钟，后来自己恢复了。帮我查一下原因。")
    tickets = "\n".join(f"[{t}] 渠道：{c}｜{text}" for t, c, text in ZH_TICKETS)
    w.tools(
        Call(
            "search_tickets",
            {"keyword": "下单失败 502", "date": "2024-05-13"},
            f"共找到 {len(ZH_TICKETS)} 条相关工单：\n{tickets}",
        )
    )
    w.tools(Call("read_file", {"path": "docs/oncall/2024-05-13.md"}, ONCALL_NOTES))
    w.tools(shell("grep -h 'upstream' /var/log/nginx/error.log.1 | head -2", ZH_ERROR_LOG))
    w.tools(
        Call("read_file", {"path": "/etc/nginx/conf.d/shop.conf"}, ZH_NGINX_CONF),
        Call("read_file", {"path": "/srv/order-service/gunicorn.conf.py"}, ZH_GUNICORN_CONF),
    )
    w.tools(fetch("https://blog.example.cn/nginx-502-upstream-keepalive", ZH_ARTICLE))
    w.answer(
        "原因找到了：**Nginx 与订单服务之间长连接的空闲超时不一致**。\n\n"
        "证据：\n"
        "1. 工单和值班记录一致：502 从 21:03 开始，21:10 比例最高（约 4%），21:42 回滚后消失；\n"
        "2. Nginx 错误日志全部是 `upstream prematurely closed connection` 和 `Connection reset by peer`，"
        "说明是后端在 Nginx 读响应时关闭了连接，而不是后端超时或崩溃；\n"
        "3. Nginx 的 upstream 配置了 `keepalive 64` 和 `keepalive_timeout 75s`，而订单服务 20:38 上线的 "
        "gunicorn 配置把 `keepalive` 从 120 改成了 5（提交 8d2f41c，“使用统一发布模板”）。\n\n"
        "机制：后端空闲 5 秒就关闭连接，Nginx 却认为这条连接 75 秒内都能复用，请求恰好落在后端关闭的瞬间"
        "就会失败并返回 502。21:42 之后恢复，是因为值班同学回滚了配置。另外有用户反馈“提交两次”，"
        "建议按订单号查一下 21:00-21:45 之间是否有重复订单。"
    )
    for question, reply in ZH_TURNS:
        w.user(question)
        w.answer(reply)
    w.user("最后确认一下：改完之后怎么验证问题真的解决了？给我一个压测方案，包括要看的指标。")
    policy = {
        "budget": {"maxTokens": 3500, "reservedForResponse": 500},
        "tokenEstimation": {"encoding": "cl100k_base", "avgCharsPerToken": 1.7},
    }
    head = header(
        "中文会话：CJK token estimation",
        "A Chinese incident investigation. cl100k_base over-counts Chinese (0.7-1.2 tokens per character "
        "here), so under a 3,000-token budget working memory drops the first answer (the root cause); "
        "counted with avgCharsPerToken 1.7, linnkit's advice for CJK is 1.6-1.8, it fits.\n"
        "Switch encoding to o200k_base (offline it falls back to avgCharsPerToken): the Chinese answers "
        "get cheaper, the ASCII logs dearer; lower avgCharsPerToken to 1.6 and the first answer drops again.",
        policy,
        model_id="deepseek-chat",
    )
    return head, w.messages


# -- 9. damaged_history ---------------------------------------------------------------------------


def damaged_history() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A history as a crashing, retrying host leaves it. Each defect is labelled in the comments."""
    repo = Repo(FEEDCACHE_FILES, "/srv/feedcache")
    w = Writer("damaged_history")
    w.system(FEEDCACHE_SYSTEM)
    w.user("The staging poller stopped at 03:12 tonight. What happened?")
    w.tools(
        shell(
            "journalctl -u feedcache-staging --since '03:00' --no-pager | tail -4",
            "May 14 03:12:40 stg-poller-1 feedcache[2117]: Traceback (most recent call last):\n"
            'May 14 03:12:40 stg-poller-1 feedcache[2117]:   File "feedcache/store.py", line 37, in '
            "save_validators\n"
            "May 14 03:12:40 stg-poller-1 feedcache[2117]: sqlite3.OperationalError: database is locked\n"
            "May 14 03:12:41 stg-poller-1 systemd[1]: feedcache-staging.service: Main process exited, "
            "code=exited, status=1/FAILURE",
        )
    )
    # An orphan call: the host crashed after the model asked for the file, before the result was stored.
    w.add(
        "assistant",
        "tool_calls",
        "",
        {"tool_calls": [_raw_call(w, "read_file", {"path": "feedcache/store.py"})]},
    )
    w.user("   ")  # an empty send: whitespace only
    w.answer("")  # the model's reply to it was empty
    w.user("Sorry, my client glitched. Again: why did the poller stop?")
    w.tools(repo.grep(r"sqlite3\.connect|commit\(\)", "feedcache"))
    # An orphan output: its call was lost when the host trimmed the history by hand.
    w.output("call_7fQmK2vXbN8pLr4TzW1sYd6H", repo.read("feedcache/store.py"))
    answer = (
        "The poller died on `sqlite3.OperationalError: database is locked` in `Store.save_validators`. "
        "Something else held a write lock on /var/lib/feedcache/staging.sqlite at 03:12 (the nightly "
        "backup job runs at 03:10), `sqlite3.connect` waits only 5 seconds by default, and `poll_all` "
        "does not catch sqlite errors, so the exception ended the process."
    )
    duplicated = w.answer(answer)
    w.messages.append(dict(w.messages[-1]))  # a retrying host stored the same answer twice, same id
    w.user("Make the store wait longer for the lock and keep polling when one save fails.")
    w.tools(repo.read("feedcache/store.py"))
    # An output without tool_call_id: a host bug dropped the field; the wire formatter cannot send it.
    w.add(
        "tool",
        "tool_output",
        "The file feedcache/store.py has been updated. 1 replacement made (line 26).",
        {"tool_name": "edit_file"},
    )
    policy = {
        "budget": {"maxTokens": 12000, "reservedForResponse": 2000},
        "toolHistory": {"strategy": "none"},
    }
    head = header(
        "Damaged history: what linnkit does not repair",
        "Orphan tool calls and outputs, an output without tool_call_id, a duplicated message id and empty "
        "messages, as a crashing host leaves them. linnkit does not purify history (spec D7): the "
        "playground lists them as warnings, and the build is what linnkit would build.\n"
        f"Look at the decisions: the orphan call and both orphan outputs fall out of working memory, while "
        f"the empty messages and both copies of {duplicated} are kept and sent.",
        policy,
    )
    return head, w.messages


def _raw_call(w: Writer, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": w.call_id(), "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


# -- YAML companions -----------------------------------------------------------------------------

FENCES_YAML_HEAD = """\
# The fence descriptors of fences_showcase.jsonl (the same list as its header's `fences`).
#   linn-playground sample_sessions/fences_showcase.jsonl --fences sample_sessions/fences_showcase.fences.yaml
# mustKeep and maxBudgetFraction are honoured by the seed defaults (spec D6) and ignored by linnkit 0.21.
# formatter is a template with {content}, {kind}, {attrs} and {attr:NAME};
# without one a fence is written <{kind}{attrs}>{content}</{kind}>.
"""

TIGHT_BUDGET_POLICY = """\
# A tight policy layer for the big sample; it replaces the session header's policy:
#   linn-playground sample_sessions/tool_loop_runs.jsonl --policy sample_sessions/tight_budget.policy.yaml
# Everything not named here keeps its default (seed defaults, or linnkit 0.21's with --defaults linnkit-0.21).
budget:
  maxTokens: 6000            # totalBudget = maxTokens - reservedForResponse = 5000
  reservedForResponse: 1000
  workingMemoryBudgetPercentage: 0.7   # working memory fills up to 3500 tokens
toolHistory:
  strategy: per-pair         # keep the last keepLatestToolPairs old groups raw, compress the rest
  retentionMode: compress
  keepLatestToolPairs: 3
  maxInteractionGroups: 20   # at most 20 old groups (raw or compressed) survive
summarization:
  triggerThreshold: 0.6      # fires when kept >= 0.9 x 3000 AND a content-only tiktoken count >= 3000;
                             # on tool_loop_runs the first holds and the second does not (no summary)
contextTrace:
  enabled: true
"""


LESSONS: dict[str, str] = {
    "short_chat": """\
title: The budget decides what the model sees
goal: Shrink the budget until working memory can no longer hold the whole chat.
steps:
  - instruction: Lower budget.maxTokens until the first answer (m003) is dropped.
    hint: Working memory is 70% of maxTokens minus the reserve (1,000); the chat needs 692 tokens. Try 1500.
    answer: {budget: {maxTokens: 1500}}
    check: {message: m003, fate: dropped, reason: dropped_by_}
""",
    "long_chat_overflow": """\
title: Working memory P1-P3
goal: See the long method answer come back when working memory gets a larger share.
steps:
  - instruction: Raise budget.workingMemoryBudgetPercentage until the method answer m013 is kept.
    hint: At 0.7 it is skipped for being 479 tokens; 0.9 makes room.
    answer: {budget: {workingMemoryBudgetPercentage: 0.9}}
    check: {message: m013, fate: kept}
""",
    "tool_loop_runs": """\
title: Compressing old tool groups, or dropping them
goal: Old tool groups are compressed to one line each; make them go away instead.
steps:
  - instruction: Set toolHistory.retentionMode to drop; the first tool call (m003) is removed, not compressed.
    hint: retentionMode is under toolHistory; compress is the seed default.
    answer: {toolHistory: {retentionMode: drop}}
    check:
      all:
        - {message: m003, fate: dropped, reason: dropped_by_tool_history_drop}
        - {strategy: tool_history_compression, applied: false}
""",
    "checkpoint_midtask": """\
title: A checkpoint prunes what came before it
goal: Choose how many tool groups before the checkpoint survive.
steps:
  - instruction: Set checkpoint.keepPairsBefore to 0 so the last exploration group (m027) is purged too.
    hint: keepPairsBefore counts tool groups kept just before the checkpoint call.
    answer: {checkpoint: {keepPairsBefore: 0}}
    check: {message: m027, fate: dropped, reason: dropped_by_CHECKPOINT_PURGED}
""",
    "summarization_trigger": """\
title: Summaries that persist over a replay
goal: Move the summarization trigger, then watch a summary made at one step carried by the next ones.
steps:
  - instruction: Raise summarization.triggerThreshold until the last build makes no summary.
    hint: From 0.66 stage 1 fails too; try 0.7.
    answer: {summarization: {triggerThreshold: 0.7}}
    check: {summarization: none}
  - instruction: >-
      Now lower it until the replay summarizes by step 10 (marker S), and the last step is given that
      persisted summary instead of making its own.
    hint: Try 0.35 and step through the timeline.
    answer: {summarization: {triggerThreshold: 0.35}}
    check:
      all:
        - {first_step: S, is: {at_most: 10}}
        - {step: last, carried: {at_least: 1}, then: {summarization: none}}
""",
    "fences_showcase": """\
title: A must-keep fence is cut to its budget share
goal: Give the project memory fence enough budget that it is no longer cut.
steps:
  - instruction: >-
      Raise budget.maxTokens until the memory fence fits in its 5% share (no fence_truncation event).
    hint: The fence is 672 tokens, so 5% of maxTokens must be at least that; try 20000.
    answer: {budget: {maxTokens: 20000}}
    check: {event: fence_truncation, fired: false}
""",
    "max_steps_streak": """\
title: Reminders along a replay
goal: Make the tool-call streak reminder fire earlier in the run.
steps:
  - instruction: Set systemReminder.thresholds.toolCallStreak to 6; the streak reminder then fires at step 9.
    hint: The streak counts tool calls in a row; step through the timeline and look for R.
    answer: {systemReminder: {thresholds: {toolCallStreak: 6}}}
    check: {step: 9, then: {reminder: tool_call_streak_every_ten}}
""",
    "chinese_session": """\
title: Counting Chinese tokens
goal: See the root-cause answer fit once Chinese is counted more cheaply.
steps:
  - instruction: Set tokenEstimation.encoding to o200k_base; the root-cause answer m014 comes back.
    hint: Offline there are no o200k ranks, so the count falls back to avgCharsPerToken (1.7).
    answer: {tokenEstimation: {encoding: o200k_base}}
    check: {message: m014, fate: kept}
""",
    "damaged_history": """\
title: Damaged history is not repaired
goal: Compress the complete old tool group while the orphans stay as they are.
steps:
  - instruction: Switch toolHistory.strategy to per-run; the complete old group (m003) is compressed.
    hint: The header sets strategy none, so nothing is compressed.
    answer: {toolHistory: {strategy: per-run}}
    check: {message: m003, fate: compressed}
""",
}


LESSON_HEAD = """\
# The lesson of this session, checked by the playground on every build (playground/lessons.py).
"""


def yaml_files() -> dict[str, str]:
    """The lessons, fence and policy examples that sit next to the sessions."""
    fences = yaml.safe_dump({"fences": FENCE_DESCRIPTORS}, sort_keys=False, allow_unicode=True, width=110)
    return {
        "fences_showcase.fences.yaml": FENCES_YAML_HEAD + fences,
        "tight_budget.policy.yaml": TIGHT_BUDGET_POLICY,
        **{f"{stem}.lesson.yaml": LESSON_HEAD + text for stem, text in LESSONS.items()},
    }


# -- main -----------------------------------------------------------------------------------------

SESSIONS: dict[str, Callable[[], tuple[dict[str, Any], list[dict[str, Any]]]]] = {
    "short_chat.jsonl": short_chat,
    "long_chat_overflow.jsonl": long_chat_overflow,
    "tool_loop_runs.jsonl": tool_loop_runs,
    "checkpoint_midtask.jsonl": checkpoint_midtask,
    "summarization_trigger.jsonl": summarization_trigger,
    "fences_showcase.jsonl": fences_showcase,
    "max_steps_streak.jsonl": max_steps_streak,
    "chinese_session.jsonl": chinese_session,
    "damaged_history.jsonl": damaged_history,
}


def render() -> dict[str, str]:
    """File name -> text of every sample and companion file."""
    return {**{name: jsonl(*make()) for name, make in SESSIONS.items()}, **yaml_files()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files instead of writing")
    args = parser.parse_args(argv)
    stale = []
    for name, text in render().items():
        path = OUT_DIR / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text, encoding="utf-8")
    verb = "stale" if args.check else "written"
    print(f"{len(stale)} {verb}: {', '.join(stale)}" if stale else "all samples up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
