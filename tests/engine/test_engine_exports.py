"""The engine's public surface: `engine.__all__` exactly, and the front ends import only that."""

from __future__ import annotations

import ast
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parents[2]
FRONT_ENDS = [
    *sorted((ROOT / "playground" / "tui").rglob("*.py")),
    *sorted((ROOT / "playground" / "notebook").rglob("*.py")),
    ROOT / "playground" / "cli" / "main.py",
    ROOT / "playground" / "cli" / "commands.py",
]

EXPORTS = [
    "AS_RECORDED",
    "BUILTIN_PRICES",
    "CATEGORY_ORDER",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_PRICE_MODEL",
    "DEFAULT_TEMPLATE",
    "EXPORT_FORMATS",
    "LIFETIMES",
    "LLM_ROLES",
    "MECHANISMS",
    "PLACEMENTS",
    "AiMessage",
    "BuildFailure",
    "BuildResult",
    "Calibration",
    "CalibrationSample",
    "ConfigurationError",
    "ContextPolicy",
    "ContextProviderError",
    "ControlSpec",
    "CostTracker",
    "Decision",
    "DefaultTokenizer",
    "EngineError",
    "Event",
    "FailingSummarizer",
    "FenceDescriptor",
    "FenceError",
    "FenceInjection",
    "FenceRegistry",
    "FixedSummarizer",
    "GroupSpec",
    "HygieneWarning",
    "InputError",
    "InvariantReport",
    "LoadProblem",
    "MockTokenizer",
    "ModelFit",
    "OfflineSummarizer",
    "PolicyFileError",
    "PolicyValidationError",
    "Price",
    "PriceTable",
    "RecordedCall",
    "RecordedRun",
    "RecordedUsage",
    "ReminderOutcome",
    "Session",
    "SessionCost",
    "SessionLoadError",
    "SessionSaveError",
    "StepCost",
    "StepPoint",
    "StepTruth",
    "SummarizerPort",
    "TokenAccount",
    "TokenRoute",
    "TokenizerPort",
    "ValueRange",
    "WireCard",
    "WireProblem",
    "as_registry",
    "available_tools",
    "build_at_step",
    "build_context",
    "call_arguments",
    "call_name",
    "case_files",
    "check_copy",
    "check_invariants",
    "check_wire",
    "control_for",
    "define_context_policy",
    "dump_fences",
    "dump_policy",
    "effective_policy",
    "export_session",
    "export_wire",
    "format_names",
    "get_value",
    "hygiene_checks",
    "import_file",
    "iter_session_steps",
    "iter_step_costs",
    "iter_truth",
    "layer_warnings",
    "load_calibration",
    "load_cases",
    "load_fences",
    "load_policy",
    "load_price_table",
    "load_session",
    "merge_context_policy",
    "messages_from",
    "output_kind_problem",
    "policy_controls",
    "policy_diff",
    "policy_groups",
    "read_case",
    "read_policy_file",
    "read_policy_layer",
    "recorded_cost",
    "recorded_run",
    "resolve_price",
    "run_all",
    "runtime_problems",
    "save_session",
    "session_cost",
    "step_points",
    "to_anthropic",
    "tokenizer_from_policy",
    "value_range",
    "write_atomic",
]


def test_the_exports_are_exactly_these() -> None:
    assert engine.__all__ == EXPORTS
    assert all(hasattr(engine, name) for name in EXPORTS)


def engine_submodule_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine."):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith("engine.")]
    return found


def test_front_ends_import_the_engine_only_through_its_package() -> None:
    assert len(FRONT_ENDS) >= 40
    assert [line for path in FRONT_ENDS for line in engine_submodule_imports(path)] == []
