"""Observation governance: the limits, the preview, the metadata, and both blob stores."""

import os
from types import SimpleNamespace

import pytest

import engine.observation as observation
from engine.messages import AiMessage
from engine.observation import (
    FileObservationStore,
    GovernedObservation,
    InMemoryObservationStore,
    ObservationStoreError,
    blob_id_for,
    govern_message,
    govern_observation,
    governance_settings,
)
from engine.policy import define_context_policy


def govern(text, **limits):
    return govern_observation(text, store=InMemoryObservationStore(), **limits)


def marker(text):
    return f"\n\n...（内容已截断，完整内容已写入 blob_id={blob_id_for(text)}）..."


# -- limits and preview ------------------------------------------------------------------------------


def test_at_the_char_limit_nothing_changes_one_over_it_is_previewed():
    assert govern("a" * 10, max_chars=10) == GovernedObservation("a" * 10)
    text = "abcdefghijk"
    governed = govern(text, max_chars=10)
    assert governed.text == "abcdefg" + marker(text)
    assert (governed.truncated, governed.blob_id) == (True, blob_id_for(text))
    assert governed.truncation == {
        "originalChars": 11,
        "previewChars": 7 + len(marker(text)),
        "originalLines": 1,
        "previewLines": 3,
    }


def test_at_the_line_limit_nothing_changes_one_over_it_keeps_seventy_percent_of_the_lines():
    ten = "\n".join(f"l{n}" for n in range(10))
    assert govern(ten, max_lines=10).truncated is False
    eleven = ten + "\nl10"
    governed = govern(eleven, max_lines=10)
    assert governed.text == "l0\nl1\nl2\nl3\nl4\nl5\nl6" + marker(eleven)
    assert (governed.truncation["originalLines"], governed.truncation["previewLines"]) == (11, 9)


def test_disabled_governance_keeps_everything():
    assert govern("x" * 50, max_chars=10, enabled=False) == GovernedObservation("x" * 50)


def test_chars_are_utf16_units_and_pairs_are_never_split():
    text = "😀" * 6  # 12 UTF-16 units, 6 Python characters
    governed = govern(text, max_chars=10)
    assert governed.text.startswith("😀😀😀\n\n")
    assert governed.truncation["originalChars"] == 12
    assert govern("😀" * 5, max_chars=10).truncated is False


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match=r"maxChars and maxLines must be > 0 \(got 0, 5\)"):
        govern("x", max_chars=0, max_lines=5)


# -- stores ------------------------------------------------------------------------------------------


def test_memory_store_dedupes_and_refuses_to_overwrite(monkeypatch):
    store = InMemoryObservationStore()
    first = store.put("same")
    assert store.put("same") == first and len(store) == 1 and store.get(first) == "same"
    monkeypatch.setattr(observation, "blob_id_for", lambda text: "0" * 16)
    store.put("one")
    with pytest.raises(ObservationStoreError, match="blob 0000000000000000 already holds a different text"):
        store.put("two")
    assert store.get("0" * 16) == "one"
    with pytest.raises(KeyError):
        store.get("f" * 16)


def test_file_store_round_trip_dedupe_and_no_temp_files(tmp_path):
    store = FileObservationStore(tmp_path / "blobs")
    blob_id = store.put("全文\nline 2")
    path = store.path(blob_id)
    inode = os.stat(path).st_ino
    assert store.put("全文\nline 2") == blob_id and os.stat(path).st_ino == inode
    assert store.get(blob_id) == "全文\nline 2"
    assert sorted(p.name for p in (tmp_path / "blobs").iterdir()) == [f"{blob_id}.txt"]


def test_file_store_never_overwrites_a_different_blob(tmp_path, monkeypatch):
    store = FileObservationStore(tmp_path)
    monkeypatch.setattr(observation, "blob_id_for", lambda text: "a" * 16)
    store.put("kept")
    with pytest.raises(ObservationStoreError, match="blob aaaaaaaaaaaaaaaa already holds a different text"):
        store.put("other")
    assert store.get("a" * 16) == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["a" * 16 + ".txt"]


def test_file_store_losing_a_race_to_the_same_content_is_fine(tmp_path, monkeypatch):
    store = FileObservationStore(tmp_path)
    real_link = os.link

    def racing_link(source, target):
        real_link(source, target)  # another writer got there first
        raise FileExistsError(target)

    monkeypatch.setattr(observation.os, "link", racing_link)
    blob_id = store.put("payload")
    assert store.get(blob_id) == "payload"
    assert [p.name for p in tmp_path.iterdir()] == [f"{blob_id}.txt"]


def test_file_store_rejects_bad_ids_and_reports_missing_ones(tmp_path):
    store = FileObservationStore(tmp_path)
    with pytest.raises(ValueError, match=r"not a blob id: '\.\./x'"):
        store.get("../x")
    with pytest.raises(KeyError):
        store.get("0123456789abcdef")


# -- messages ----------------------------------------------------------------------------------------


def tool_output(content, **metadata):
    return AiMessage("t1", "tool", "tool_output", content, 5, {"tool_call_id": "c1", **metadata})


def test_govern_message_replaces_content_and_records_the_truncation():
    store = InMemoryObservationStore()
    governed = govern_message(
        tool_output("x" * 30, raw_output='{"observation": "…"}'), {"maxChars": 10}, store
    )
    preview = "x" * 7 + marker("x" * 30)
    assert governed.content == preview
    assert governed.metadata == {
        "tool_call_id": "c1",
        "raw_output": '{"observation": "…"}',
        "observation": preview,
        "observationTruncation": {
            "originalChars": 30,
            "previewChars": len(preview),
            "originalLines": 1,
            "previewLines": 3,
        },
        "tool_output_store": {"blob_id": blob_id_for("x" * 30)},
    }
    assert store.get(blob_id_for("x" * 30)) == "x" * 30


def test_govern_message_keeps_the_full_text_as_raw_output_when_there_was_none():
    governed = govern_message(
        tool_output("y" * 30), {"observationGovernance": {"maxChars": 10}}, InMemoryObservationStore()
    )
    assert governed.raw_output == "y" * 30


def test_govern_message_leaves_other_messages_small_and_governed_outputs_alone():
    store = InMemoryObservationStore()
    answer = AiMessage("a", "assistant", "final_answer", "z" * 30)
    small = tool_output("short")
    done = tool_output("w" * 30, observationTruncation={"originalChars": 99, "previewChars": 30})
    assert govern_message(answer, {"maxChars": 10}, store) is answer
    assert govern_message(small, None, store) is small
    assert govern_message(done, {"maxChars": 10}, store) is done
    assert len(store) == 0


def test_policy_group_forms():
    assert governance_settings(None) == (True, 20_000, 1_200)
    model = define_context_policy({"toolOutput": {"observationGovernance": {"maxChars": 123}}})
    assert governance_settings(model.tool_output) == (True, 123, 1_200)
    assert governance_settings(model.tool_output.observation_governance) == (True, 123, 1_200)
    assert governance_settings({"observationGovernance": {"enabled": False, "maxLines": 7}}) == (
        False,
        20_000,
        7,
    )
    group = SimpleNamespace(observation_governance=SimpleNamespace(enabled=True, max_chars=50, max_lines=9))
    assert governance_settings(group) == (True, 50, 9)
