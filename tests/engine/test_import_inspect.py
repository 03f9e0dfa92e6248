"""Inspect AI eval logs, `.json` and zipped `.eval`: real logs from Inspect AI's own tests (MIT), counted
by hand; and the archive's bounds (truncated, a member inflating past its limit, too many members)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from engine.importers import archives, import_file
from engine.importers.detect import detect_text, read_source
from engine.importers.registry import Sniff, importers
from engine.safe_input import InputError
from playground.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "inspect-ai"
DEDUP = DATA / "log_message_deduplication.eval"
POPULARITY = DATA / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
SECURITY = DATA / "2025-05-12T20-28-26-04-00_security-guide.json"
IMAGES = DATA / "log_images.json"


def test_eval_archive_with_tool_calls_paired_and_message_ids_kept() -> None:
    result = import_file(DEDUP)
    assert result.format == "inspect-ai" and result.problems == [] and result.unpaired == []
    came = result.came_in()
    assert (came["userTurns"], came["assistantTurns"], came["toolCalls"], came["toolResults"]) == (1, 6, 5, 5)
    assert [m.id for m in result.messages[:3]] == [
        "cL6k3AmiAjou8DuttQmcHK",
        "diN7pr2NXFgBXJW9sf8t6i",
        "feyFJJdBDqzJ9m64NkGAtq",
    ]
    call = result.messages[1].meta("tool_calls")[0]
    assert call["id"] == "hardcoded_0" and call["function"] == {"name": "bash", "arguments": '{"cmd":"ls"}'}
    assert result.messages[2].tool_call_id == "hardcoded_0" and result.messages[2].meta("tool_name") == "bash"
    assert result.messages[-1].type == "final_answer" and result.messages[-1].content == "done"
    assert result.session == {
        "task": "inspect_test_utils/guess_number",
        "sample": "0",
        "epoch": 1,
        "model": "hardcoded",
    }


def test_each_sample_of_an_eval_archive_is_a_conversation_with_its_usage() -> None:
    first = import_file(POPULARITY)
    assert first.conversations == 10
    assert [m.type for m in first.messages] == ["system_prompt", "user_input", "final_answer"]
    usage = first.messages[2].meta("usage")
    assert (usage["provider"], usage["promptTokens"], usage["outputTokens"]) == ("inspect", 64, 2)
    last = import_file(POPULARITY, conversation=-1)
    assert last.session["sample"] == 10 and last.messages[2].meta("usage")["promptTokens"] == 63


def test_json_log_resolves_attachments_and_keeps_a_scorers_call_apart() -> None:
    result = import_file(SECURITY)
    assert result.conversations == 3
    assert [m.type for m in result.messages] == ["system_prompt", "user_input", "final_answer"]
    assert result.messages[2].meta("usage")["promptTokens"] == 61
    (scorer,) = result.other_calls  # the model-graded scorer's call: billed, not in the conversation
    assert (scorer["promptTokens"], scorer["outputTokens"]) == (259, 292)
    assert "attachment://" not in json.dumps([m.to_dict() for m in result.messages])


def test_without_message_ids_a_scorers_call_stays_apart_and_the_answer_keeps_its_usage(tmp_path) -> None:
    # logs before Inspect wrote message ids (0.3.43, 0.3.58): the solver's call is told by its answer's
    # text, and the model-graded scorer's call is the other billed call, as with ids
    log = json.loads(SECURITY.read_text(encoding="utf-8"))
    for sample in log["samples"]:
        for message in sample["messages"]:
            message.pop("id", None)
        for event in sample["events"]:
            for choice in (event.get("output") or {}).get("choices") or []:
                choice["message"].pop("id", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(log), encoding="utf-8")
    with_ids, without = import_file(SECURITY), import_file(old)
    assert without.came_in()["callsWithUsage"] == with_ids.came_in()["callsWithUsage"] == 1
    assert without.came_in()["otherBilledCalls"] == with_ids.came_in()["otherBilledCalls"] == 1
    assert without.messages[-1].meta("usage") == with_ids.messages[-1].meta("usage")


def test_an_image_is_a_placeholder_with_its_size() -> None:
    result = import_file(IMAGES)
    assert result.messages[1].content == "What is this a picture of?\n\n[image: image/png, 6,396 bytes]"
    assert result.came_in()["images"] == 1


@pytest.mark.parametrize("path", [DEDUP, POPULARITY, SECURITY, IMAGES], ids=lambda p: p.name)
def test_only_the_inspect_importer_claims_a_log(path: Path) -> None:
    text, _ = read_source(path)
    assert [i.name for i in importers() if i.detect(Sniff.of(text, path.name))] == ["inspect-ai"]
    assert detect_text(text) == "inspect-ai"


def test_a_truncated_archive_is_one_line_naming_the_file(tmp_path: Path, capsys) -> None:
    cut = tmp_path / "cut.eval"
    cut.write_bytes(DEDUP.read_bytes()[:5000])
    assert main(["import", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {cut}: not a readable zip archive, truncated or damaged (")
    assert err.count("\n") == 1
    assert main(["build", str(cut)]) == 2  # build says it once too, never a line per byte line
    assert capsys.readouterr().err.count("\n") == 1


def test_a_member_inflating_past_its_bound_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t"}, "status": "success"}))
        archive.writestr("samples/1_epoch_1.json", b" " * (archives.MAX_MEMBER_BYTES + 1))
    assert bomb.stat().st_size < 200_000
    with pytest.raises(InputError) as caught:
        import_file(bomb)
    assert str(caught.value) == (
        f"{bomb}: member samples/1_epoch_1.json: 67,108,865 bytes once inflated (limit 67,108,864)"
    )


def test_too_many_members_and_a_zip_that_is_no_eval_log(tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        for n in range(5):
            archive.writestr(f"notes/{n}.txt", "x")
    with pytest.raises(InputError, match=r"other.zip: a zip archive, but not an Inspect AI .eval log"):
        import_file(other)
    monkeypatch.setattr(archives, "MAX_MEMBERS", 4)
    with pytest.raises(InputError, match=r"other.zip: 5 members in the archive \(limit 4\)$"):
        import_file(other)


def test_a_member_that_is_not_json_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t"}, "status": "success"}))
        archive.writestr("samples/1_epoch_1.json", '{"messages": [')
    with pytest.raises(InputError) as caught:
        import_file(broken)
    assert str(caught.value).startswith(f"{broken}: member samples/1_epoch_1.json: invalid JSON (")


def test_a_binary_file_is_one_line_not_a_decode_error(tmp_path: Path, capsys) -> None:
    binary = tmp_path / "blob.json"
    binary.write_bytes(b'{"a": 1}\n\xff\xfe')  # its bad bytes read as U+FFFD: no format has its fields
    assert main(["import", str(binary)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {binary}: unrecognised transcript format; supported: ")
    assert err.count("\n") == 1


def test_inspect_usage_adds_the_cache_to_the_uncached_input() -> None:
    from engine.usage import inspect_usage

    usage = inspect_usage(
        {"input_tokens": 10, "input_tokens_cache_read": 90, "input_tokens_cache_write": 5, "output_tokens": 3}
    )
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (105, 90, 5)
    assert str(inspect_usage({"input_tokens": -1, "output_tokens": 3})) == (
        "usage.input_tokens: negative (-1); the call is treated as unrecorded"
    )
