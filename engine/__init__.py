"""linn-playground's engine: a pure-Python port of linnkit's context-building pipeline. No UI imports."""
