"""The application layer: one open session and what a user does with it (the workspace: policy edits,
fences, steps, pins, exports), builds and replays, costs, sweeps, diffs of two runs, the audit store, and
the view models both front ends draw. It imports the engine and no UI library."""
