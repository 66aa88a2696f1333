"""What people read: the design review (Markdown, HTML, notebook) and its live checks, the
executed notebooks, the static site, and a CANN repository's operator report.

The top floor under the commands: may import every other package; nothing imports it but
``commands`` and ``lint``.
"""
