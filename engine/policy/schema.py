"""The JSON Schema of `contextPolicy`, generated from the model and kept in the repo.

Regenerate after changing the model: `python -m engine.policy.schema` (`--check` only reports).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from engine.policy.io import write_atomic
from engine.policy.model import ContextPolicy

SCHEMA_PATH = Path(__file__).with_name("context_policy.schema.json")
REGENERATE_HINT = "python -m engine.policy.schema"


def policy_json_schema() -> dict[str, Any]:
    """The schema of the camelCase wire form, with each field's label, help and UI hints."""
    schema = ContextPolicy.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def render_schema() -> str:
    return json.dumps(policy_json_schema(), indent=2, ensure_ascii=False) + "\n"


def schema_is_current(path: Path = SCHEMA_PATH) -> bool:
    return path.is_file() and path.read_text(encoding="utf-8") == render_schema()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.policy.schema", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the stored schema is stale")
    args = parser.parse_args(argv)
    if args.check:
        current = schema_is_current()
        print(f"{SCHEMA_PATH}: {'up to date' if current else f'stale; run {REGENERATE_HINT}'}")
        return 0 if current else 1
    write_atomic(SCHEMA_PATH, render_schema())
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
