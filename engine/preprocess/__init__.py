"""Preprocessors, in linnkit's priority order (spec §5.1): compressor 0, replay guard 0.5,
purification 1, current-turn assembler 10, fence lifetime 15."""
