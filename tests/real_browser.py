"""Playwright driving Debian's chromium (``make browser`` installs it; Playwright's own browser
download cannot work here), or a skip that says which of the two is missing."""

from __future__ import annotations

import shutil
from contextlib import contextmanager

import pytest

WINDOW = {"width": 1400, "height": 900}  # the newcomer's window (issue 28)


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed (make browser installs Debian's chromium)")
    return path


@contextmanager
def browser_page():
    """A page in a 1,400 px wide window of headless chromium."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    executable = chromium()
    with sync_playwright() as driver:
        try:
            browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"])
        except Error as exc:
            pytest.skip(f"playwright cannot start {executable}: {str(exc).splitlines()[0]}")
        try:
            page = browser.new_page(viewport=WINDOW)
            page.set_default_timeout(30_000)
            yield page
        finally:
            browser.close()
