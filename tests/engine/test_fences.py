"""Fences: descriptors, registry errors, the formatter and its templates, injections, YAML files."""

from __future__ import annotations

import pytest

from engine.fences import (
    FenceDescriptor,
    FenceError,
    FenceInjection,
    FenceRegistry,
    FenceTemplateError,
    as_registry,
    dump_fences,
    format_attrs,
    load_fences,
    parse_fences,
)


def memory(**changes) -> FenceDescriptor:
    fields = {"kind": "memory-context", "llm_role": "user", "placement": "before-current-user"}
    return FenceDescriptor(**{**fields, "lifetime": "turn-only", **changes})


def test_default_formatter_matches_the_conformance_one():
    registry = FenceRegistry([memory()])
    assert registry.format("memory-context", "likes tea") == "<memory-context>likes tea</memory-context>"
    attrs = {"file": "src/a&b.ts", "line": 21, "title": 'say "hi" <now>'}
    assert registry.format("memory-context", "x < y", attrs) == (
        '<memory-context file="src/a&amp;b.ts" line="21" title="say &quot;hi&quot; <now>">'
        "x < y</memory-context>"
    )
    assert format_attrs({"on": True, "off": False, "none": None, "half": 0.5, "one": 1.0}) == (
        ' on="true" off="false" none="null" half="0.5" one="1"'
    )


def test_template_formatter():
    descriptor = memory(formatter="[{kind}{attrs}] {{literal}} {attr:source}/{attr:missing}: {content}")
    assert (
        descriptor.format("hi", {"source": 'a"b'})
        == '[memory-context source="a&quot;b"] {literal} a&quot;b/: hi'
    )
    assert memory(formatter="<m>\n{content}\n</m>").format("x") == "<m>\nx\n</m>"


@pytest.mark.parametrize(
    "template",
    [
        "{content.__class__}",
        "{0}",
        "{}",
        "{content!r}",
        "{content:>10}",
        "{attrs[name]}",
        "{attr}",
        "{attr:{kind}}",
        "{attr.name}",
        "{kind.__init__.__globals__}",
    ],
)
def test_templates_cannot_reach_python(template):
    with pytest.raises(FenceTemplateError) as caught:
        memory(formatter=template)
    assert str(caught.value) == (
        f"Fence \"memory-context\" formatter: field '{template}' is not allowed; "
        "use {content}, {kind}, {attrs} or {attr:NAME}"
    )


def test_malformed_template():
    with pytest.raises(
        FenceTemplateError, match=r"Single '\}' encountered in format string; write \{\{ or \}\}"
    ):
        memory(formatter="oops }")


def test_register_errors_are_linnkits():
    registry = FenceRegistry([memory()])
    with pytest.raises(FenceError) as caught:
        registry.register(memory(kind="Memory_Context"))
    assert str(caught.value) == 'Fence kind "Memory_Context" must be kebab-case.'
    for fraction in (0, 1.5, -0.1):
        with pytest.raises(FenceError) as caught:
            registry.register(memory(kind="other", max_budget_fraction=fraction))
        assert str(caught.value) == "Fence maxBudgetFraction must be within (0, 1]."
    with pytest.raises(FenceError) as caught:
        registry.register(memory())
    assert str(caught.value) == 'Fence kind "memory-context" is already registered.'
    registry.register(memory(kind="a1-b2", max_budget_fraction=1))
    assert registry.kinds() == ["memory-context", "a1-b2"]


@pytest.mark.parametrize("kind", ["a", "abc-def", "a1-2b", "x-y-z"])
def test_kebab_case_kinds(kind):
    FenceRegistry([memory(kind=kind)])


@pytest.mark.parametrize("kind", ["", "A", "1a", "a-", "-a", "a--b", "a_b", "a b"])
def test_not_kebab_case(kind):
    with pytest.raises(FenceError, match="must be kebab-case"):
        FenceRegistry([memory(kind=kind)])


def test_descriptor_field_errors():
    with pytest.raises(FenceError) as caught:
        memory(llm_role="assistant")
    assert str(caught.value) == 'llmRole: must be one of "system", "user" (got \'assistant\')'
    with pytest.raises(FenceError, match='placement: must be one of "after-system", "before-current-user"'):
        memory(placement="end")
    with pytest.raises(FenceError, match="mustKeep: must be true or false"):
        memory(must_keep="yes")
    with pytest.raises(FenceError, match="maxBudgetFraction: must be a number"):
        memory(max_budget_fraction=True)


def test_registry_edits_keep_order():
    registry = FenceRegistry([memory(kind="a"), memory(kind="b"), memory(kind="c")])
    registry.replace("b", memory(kind="b2", lifetime="persisted"))
    assert registry.kinds() == ["a", "b2", "c"]
    assert registry.get("b2").lifetime == "persisted"
    assert registry.get("b") is None
    with pytest.raises(FenceError, match='Fence kind "c" is already registered.'):
        registry.replace("a", memory(kind="c"))
    assert [d.kind for d in registry] == ["a", "b2", "c"]
    assert registry.remove("a").kind == "a"
    assert "a" not in registry and len(registry) == 2
    with pytest.raises(FenceError) as caught:
        registry.remove("a")
    assert str(caught.value) == 'Fence kind "a" is not registered.'
    with pytest.raises(FenceError, match='Fence kind "zz" is not registered.'):
        registry.format("zz", "x")


def test_injection_to_message():
    registry = FenceRegistry([memory(), memory(kind="rules", llm_role="system", placement="after-system")])
    injection = FenceInjection("memory-context", "likes tea", {"source": "store"}, {"origin": "host"})
    message = injection.to_message(registry, "f1", 1234)
    assert (message.id, message.role, message.type, message.content, message.timestamp) == (
        "f1",
        "user",
        "context_injection",
        "likes tea",
        1234,
    )
    assert message.metadata == {
        "origin": "host",
        "fenceKind": "memory-context",
        "fenceAttrs": {"source": "store"},
        "fencePlacement": "before-current-user",
    }
    assert FenceInjection("rules", "r").to_message(registry, "f2", 0).metadata == {
        "fenceKind": "rules",
        "fenceAttrs": {},
        "fencePlacement": "after-system",
    }
    assert FenceInjection("rules", "r").to_message(registry, "f2", 0).role == "system"
    with pytest.raises(FenceError) as caught:
        FenceInjection("nope", "x").to_message(registry, "f3", 0)
    assert str(caught.value) == 'Fence kind "nope" is not registered.'
    with pytest.raises(FenceError) as caught:
        injection.to_message(None, "f4", 0)
    assert str(caught.value) == "Fence injections require a FenceRegistry."


FILE = """\
fences:
  - kind: memory-context
    llmRole: user
    placement: before-current-user
    lifetime: turn-only
    mustKeep: true
    maxBudgetFraction: 0.25
  - kind: workspace-rules
    llmRole: system
    placement: after-system
    lifetime: persisted
    formatter: "<rules>\\n{content}\\n</rules>"
"""


def test_yaml_round_trip(tmp_path):
    path = tmp_path / "fences.yaml"
    path.write_text(FILE, encoding="utf-8")
    registry = load_fences(path)
    assert registry.kinds() == ["memory-context", "workspace-rules"]
    assert registry.get("memory-context").must_keep is True
    assert registry.get("memory-context").max_budget_fraction == 0.25
    assert registry.format("workspace-rules", "r") == "<rules>\nr\n</rules>"
    again = tmp_path / "again.yaml"
    again.write_text(dump_fences(registry), encoding="utf-8")
    assert load_fences(again).list() == registry.list()


def test_a_bare_list_and_snake_case_keys_load():
    registry = parse_fences(
        [{"kind": "a", "llm_role": "user", "placement": "after-system", "lifetime": "persisted"}]
    )
    assert registry.get("a").llm_role == "user"
    assert parse_fences(None).kinds() == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            [{"kind": "a", "llmRole": "assistant", "placement": "after-system", "lifetime": "persisted"}],
            'f.yaml: fences[0].llmRole: must be one of "system", "user" (got \'assistant\')',
        ),
        (
            [
                {"kind": "a", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"},
                {"kind": "B", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"},
            ],
            'f.yaml: fences[1].kind: Fence kind "B" must be kebab-case.',
        ),
        (
            [
                {"kind": "a", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"},
                {"kind": "a", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"},
            ],
            'f.yaml: fences[1].kind: Fence kind "a" is already registered.',
        ),
        (
            [
                {
                    "kind": "a",
                    "llmRole": "user",
                    "placement": "after-system",
                    "lifetime": "x",
                    "maxBudgetFraction": 2,
                }
            ],
            'f.yaml: fences[0].lifetime: must be one of "turn-only", "persisted" (got \'x\')',
        ),
        (
            [
                {
                    "kind": "a",
                    "llmRole": "user",
                    "placement": "after-system",
                    "lifetime": "persisted",
                    "maxBudgetFraction": 2,
                }
            ],
            "f.yaml: fences[0].maxBudgetFraction: Fence maxBudgetFraction must be within (0, 1].",
        ),
        (
            [{"kind": "a", "llmRole": "user", "placement": "after-system"}],
            "f.yaml: fences[0].lifetime: missing",
        ),
        (
            [
                {
                    "kind": "a",
                    "llmRole": "user",
                    "placement": "after-system",
                    "lifetime": "persisted",
                    "colour": 1,
                }
            ],
            "f.yaml: fences[0].colour: unknown field; fields are kind, llmRole, placement, lifetime, "
            "mustKeep, maxBudgetFraction, formatter",
        ),
        (
            [
                {
                    "kind": "a",
                    "llmRole": "user",
                    "placement": "after-system",
                    "lifetime": "persisted",
                    "formatter": "{0}",
                }
            ],
            "f.yaml: fences[0]: Fence \"a\" formatter: field '{0}' is not allowed; "
            "use {content}, {kind}, {attrs} or {attr:NAME}",
        ),
        (["memory"], "f.yaml: fences[0]: expected a mapping, got a string"),
        ("memory", "f.yaml: expected a list of fence descriptors or a mapping with a 'fences' list"),
        ({"fence": []}, "f.yaml: fence: unknown key; a fence file holds only 'fences'"),
    ],
)
def test_file_errors_name_the_entry_and_field(data, message):
    with pytest.raises(FenceError) as caught:
        parse_fences(data, "f.yaml")
    assert str(caught.value) == message


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(FenceError, match=r"missing.yaml: no such file$"):
        load_fences(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("fences:\n  - kind: [a\n", encoding="utf-8")
    with pytest.raises(FenceError) as caught:
        load_fences(bad)
    assert str(caught.value).startswith(f"{bad}:3: bad YAML: ")
    unsafe = tmp_path / "unsafe.yaml"
    unsafe.write_text("!!python/object/apply:os.system ['true']\n", encoding="utf-8")
    with pytest.raises(FenceError, match="unsafe.yaml:1: unsafe or unknown YAML tag"):
        load_fences(unsafe)


def test_as_registry():
    registry = FenceRegistry([memory()])
    assert as_registry(registry) is registry
    assert as_registry(None) is None
    assert as_registry([]) is None  # the conformance cases' "no registry"
    assert as_registry([memory()]).kinds() == ["memory-context"]
    conformance_entry = {"kind": "a", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"}
    assert as_registry([{**conformance_entry, "mustKeep": False, "maxBudgetFraction": 1}]).kinds() == ["a"]
