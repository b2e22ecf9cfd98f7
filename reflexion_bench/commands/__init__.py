"""Command-line sub-commands (``reflexion-bench <command>``)."""
