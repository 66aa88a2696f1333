"""What people read: the design review (Markdown, HTML, notebook) and its live checks, the
executed notebooks, and the static site.

The top floor under the commands: may import every other package; nothing imports it but
``commands`` and ``lint``.
"""
