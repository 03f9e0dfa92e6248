"""linn-playground's front ends: the CLI, the Textual app and the notebook widgets."""
