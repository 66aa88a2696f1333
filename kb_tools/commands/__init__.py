"""One module per ``kbt`` subcommand (discovered by name; see kb_tools.cli)."""
