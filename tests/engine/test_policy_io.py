"""Policy files: YAML/JSON round trips, safe loading, clear errors, atomic writes, the stored schema."""

import json

import pytest
import yaml

from engine.policy import (
    PolicyFileError,
    define_context_policy,
    dump_policy,
    effective_policy,
    load_policy,
    loads_policy,
    policy_diff,
    read_policy_layer,
    write_atomic,
)
from engine.policy.schema import REGENERATE_HINT, SCHEMA_PATH, render_schema, schema_is_current

TUNED = {
    "budget": {"maxTokens": 64000, "reservedForResponse": 4000},
    "toolHistory": {"strategy": "per-pair", "keepLatestToolPairs": 1},
    "providerReplay": {"missingSidecarBehavior": "degrade_to_text"},
    "mustKeep": {
        "alwaysKeepFenceKinds": ["memory-context"],
        "truncationRules": [
            {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "memory-truncate"}
        ],
    },
    "tokenEstimation": {"calibration": {"enabled": True, "maxCoefficient": 3.5}},
    "systemReminder": {
        "enabledRuleIds": [],
        "thresholds": {"budgetWarningRatio": 0.8},
        "extraRules": [
            {
                "id": "nudge",
                "trigger": {"kind": "step-count-modulo", "period": 4},
                "contentTemplate": "periodicTaskstateReflection",
                "contentArgs": {"note": "检查任务状态", "n": None},
            }
        ],
    },
}


@pytest.mark.parametrize("defaults", ["seed", "linnkit-0.21"])
@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("only_changed", [False, True])
def test_round_trip(defaults, fmt, only_changed):
    policy = effective_policy(TUNED, defaults=defaults)
    text = dump_policy(policy, only_changed, fmt, defaults=defaults)
    assert loads_policy(text, fmt, defaults=defaults) == policy


def test_only_changed_yaml_is_nested_and_omits_unchanged_groups():
    text = dump_policy(
        effective_policy({"budget": {"maxTokens": 64000}, "contextTrace": {"enabled": True}}), True
    )
    assert text == "budget:\n  maxTokens: 64000\ncontextTrace:\n  enabled: true\n"
    assert dump_policy(define_context_policy(None), True) == "{}\n"


def test_only_changed_is_relative_to_the_chosen_profile():
    policy = effective_policy({}, defaults="linnkit-0.21")
    assert policy_diff(policy, "linnkit-0.21") == {}
    assert policy_diff(policy, "seed") == {
        "budget": {"maxTokens": 232000},
        "toolHistory": {"retentionMode": "drop"},
    }


def test_full_yaml_is_camel_case_in_model_order_with_unicode():
    text = dump_policy(effective_policy(TUNED))
    assert text.startswith("profileId: agent\nbudget:\n  maxTokens: 64000\n  reservedForResponse: 4000\n")
    assert "检查任务状态" in text
    assert "max_tokens" not in text


def test_json_pastes_into_linnkit_agent_spec():
    full = json.loads(dump_policy(effective_policy(TUNED), fmt="json"))
    assert full["profileId"] == "agent"
    assert "agentId" not in full["summarization"]  # unset fields are omitted, not null
    assert full["providerReplay"] == {"missingSidecarBehavior": "degrade_to_text"}
    assert full["systemReminder"]["extraRules"][0]["contentTemplate"] == "periodicTaskstateReflection"
    # only-changed JSON keeps the seed deviations so that linnkit (232000/drop by default) behaves the same
    minimal = json.loads(dump_policy(define_context_policy(None), True, "json"))
    assert minimal == {
        "profileId": "agent",
        "budget": {"maxTokens": 120000},
        "toolHistory": {"retentionMode": "compress"},
    }
    assert json.loads(
        dump_policy(effective_policy({}, defaults="linnkit-0.21"), True, "json", defaults="linnkit-0.21")
    ) == {"profileId": "agent"}


def test_null_allowlist_survives_a_full_json_round_trip():
    host = {"systemReminder": {"enabledRuleIds": ["last_steps_hint"]}}
    policy = effective_policy({"systemReminder": {"enabledRuleIds": None}}, host)
    text = dump_policy(policy, fmt="json")
    assert json.loads(text)["systemReminder"]["enabledRuleIds"] is None
    assert loads_policy(text, "json", host=host) == policy


def test_load_policy_files(tmp_path):
    (tmp_path / "p.yaml").write_text("budget:\n  max_tokens: 5000\n", encoding="utf-8")
    (tmp_path / "p.json").write_text('{"toolHistory": {"retentionMode": "drop"}}', encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    assert load_policy(tmp_path / "p.yaml").budget.max_tokens == 5000
    assert read_policy_layer(tmp_path / "p.yaml") == {"budget": {"maxTokens": 5000}}
    assert load_policy(tmp_path / "p.json", defaults="linnkit-0.21").budget.max_tokens == 232000
    assert load_policy(tmp_path / "empty.yaml") == define_context_policy(None)


def _file_error(tmp_path, text, name="policy.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyFileError) as info:
        load_policy(path)
    return path, info.value


def test_python_tags_are_rejected(tmp_path):
    path, err = _file_error(tmp_path, "budget:\n  maxTokens: !!python/object/apply:os.system ['echo hi']\n")
    assert err.line == 2
    assert str(err) == (
        f"{path}:2: unsafe or unknown YAML tag: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'; only plain YAML (mappings, lists, strings, "
        "numbers, booleans) is allowed"
    )
    _, err = _file_error(tmp_path, "!!python/object:builtins.dict {}\n")
    assert "python/object:builtins.dict" in str(err)


def test_bad_yaml_names_file_and_line(tmp_path):
    path, err = _file_error(tmp_path, "budget:\n  maxTokens: 1\n toolHistory: x\n")
    assert err.line == 3
    assert str(err).startswith(f"{path}:3: bad YAML: ")


def test_bad_json_names_file_and_line(tmp_path):
    path, err = _file_error(tmp_path, '{\n  "budget": {"maxTokens": 1,}\n}', name="policy.json")
    assert (
        str(err) == f"{path}:2: bad JSON: Expecting property name enclosed in double quotes (column 29)"
    )


def test_not_a_mapping(tmp_path):
    path, err = _file_error(tmp_path, "- budget\n- toolHistory\n")
    assert str(err) == f"{path}: expected a mapping of policy groups, got a list"


def test_invalid_values_are_listed_under_the_file(tmp_path):
    path, err = _file_error(tmp_path, "budget:\n  maxTokens: 0\ntoolHistory:\n  strategy: per-turn\n")
    assert str(err) == (
        f"{path}:2: budget.maxTokens: 0 must be greater than 0\n"
        f"{path}:4: toolHistory.strategy: 'per-turn' is not one of 'per-pair', 'per-run', 'none'"
    )
    assert [issue.code for issue in err.issues] == ["too_small", "invalid_enum_value"]


def test_missing_file(tmp_path):
    with pytest.raises(PolicyFileError, match="nope.yaml: no such file"):
        load_policy(tmp_path / "nope.yaml")


def test_write_atomic(tmp_path):
    target = tmp_path / "policy.yaml"
    write_atomic(target, "a: 1\n")
    target.chmod(0o640)
    write_atomic(target, "a: 2\n")
    assert target.read_text(encoding="utf-8") == "a: 2\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["policy.yaml"]


def test_write_atomic_refuses_the_protected_path(tmp_path):
    session = tmp_path / "session.jsonl"
    session.write_text("{}\n", encoding="utf-8")
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        write_atomic(tmp_path / "." / "session.jsonl", "x", protected=session)
    with pytest.raises(PolicyFileError):
        write_atomic(session, "x", protected=[tmp_path / "other", str(session)])
    assert session.read_text(encoding="utf-8") == "{}\n"
    write_atomic(tmp_path / "policy.yaml", "x", protected=session)


def test_dumped_yaml_is_plain_safe_yaml():
    text = dump_policy(effective_policy(TUNED))
    assert yaml.safe_load(text)["mustKeep"]["truncationRules"][0]["maxBudgetFraction"] == 0.1


def test_stored_schema_is_current():
    assert schema_is_current(), f"{SCHEMA_PATH.name} is stale; regenerate it with `{REGENERATE_HINT}`"


def test_schema_describes_the_wire_form():
    schema = json.loads(render_schema())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    budget = schema["$defs"]["BudgetPolicy"]["properties"]
    assert budget["maxTokens"]["exclusiveMinimum"] == 0
    assert budget["maxTokens"]["default"] == 120000
    assert budget["maxTokens"]["ui"] == {
        "step": 1000,
        "coarseStep": 10000,
        "uiMin": 1000,
        "uiMax": 1000000,
        "scale": "log",
    }
    assert budget["workingMemoryBudgetPercentage"]["maximum"] == 1
    assert "toolHistory" in schema["properties"]


def test_a_failed_write_names_the_target_not_the_temporary_file(tmp_path):
    wanted = tmp_path / "nope" / "policy.yaml"
    with pytest.raises(PolicyFileError) as missing_dir:
        write_atomic(wanted, "budget: {}\n")
    assert str(missing_dir.value) == f"{wanted}: cannot write: No such file or directory"
    target = tmp_path / "dir"
    target.mkdir()
    with pytest.raises(PolicyFileError) as into_dir:
        write_atomic(target, "budget: {}\n")
    assert str(into_dir.value) == f"{target}: is a directory"
    assert [p.name for p in target.parent.iterdir()] == ["dir"]  # no temporary file left behind


def test_policy_numbers_are_read_as_yaml_1_2_reads_them(tmp_path) -> None:
    # PyYAML's YAML 1.1 read `020000` as octal 8192 and `1:23:20` as base 60, and refused `5e-1`
    path = tmp_path / "p.yaml"
    path.write_text("budget: {maxTokens: 020000}\nsummarization: {triggerThreshold: 5e-1}\n")
    policy = load_policy(path)
    assert (policy.budget.max_tokens, policy.summarization.trigger_threshold) == (20000, 0.5)
    path.write_text("budget:\n  maxTokens: 1:23:20\n")
    with pytest.raises(PolicyFileError) as refused:
        load_policy(path)
    assert "p.yaml:2: budget.maxTokens" in str(refused.value)


def test_a_large_file_without_aliases_is_not_called_an_alias_bomb(tmp_path) -> None:
    path = tmp_path / "p.yaml"
    rules = "".join(f"  - {{id: r{i}, trigger: {{kind: phase-equals, value: x}}, contentTemplate: t}}\n"
                    for i in range(40_000))  # fmt: skip
    path.write_text("systemReminder:\n extraRules:\n" + rules.replace("  - ", "  - ", 1))
    with pytest.raises(PolicyFileError) as refused:
        load_policy(path)
    assert "more than 200,000 values (the limit of a YAML input)" in str(refused.value)
    assert "alias" not in str(refused.value)
