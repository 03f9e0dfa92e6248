"""HTML: the view models rendered as self-contained pages and parts (the notebook shows the parts, the CLI
and the workspace's export write the pages), and `serve`, the TUI in a browser. No UI library."""
