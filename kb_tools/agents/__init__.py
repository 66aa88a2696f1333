"""opkb for coding agents: ``kbt mcp``, a Model Context Protocol server whose tools are the
``kbt`` commands, whose resources are the pages and whose prompts are the workflow's roles.

The floor under ``commands``: it runs the commands themselves (``invoke``), so an agent gets the
same facts as a person at the terminal; nothing below imports it.
"""
