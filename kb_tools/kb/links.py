"""Whether one page links another: a page that restates a registered fact or value must link
the page that owns it, so a reader can reach the one statement that counts."""

from __future__ import annotations

import os
import re


def links_to(page, home) -> bool:
    """Whether ``page`` has a Markdown link whose target resolves to ``home``'s file."""
    home_file = os.path.normpath(home.path)
    return any(os.path.normpath(page.path.parent / target) == home_file
               for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.body))
