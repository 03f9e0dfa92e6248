"""The engine is a library: importing it must not pull in any UI package."""

import subprocess
import sys

UI_PACKAGES = ("textual", "ipywidgets", "playground", "rich")


def test_engine_imports_no_ui_package():
    code = (
        "import sys, engine, engine.build, engine.replay, engine.conformance, engine.importers;"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {UI_PACKAGES!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_are_pinned():
    import engine

    assert {"build_context", "load_session", "ContextPolicy", "BuildResult", "check_invariants"} <= set(
        engine.__all__
    )
    for name in engine.__all__:
        assert hasattr(engine, name), name
