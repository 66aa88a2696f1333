"""The static site: it builds offline without a warning and writes nothing outside its
folder, every internal link resolves, the index starts a newcomer off above the fold with a
sidebar grouped by kind, and notebook tables render as tables. In a real browser (Playwright
driving chromium at 1,400 px) every page loads, a notebook page shows its figures (a screenshot
is saved under build/test-output/), no page is wider than the window, at most a tenth of the
code and output blocks scroll sideways, the review pages stay under 12,000 px, the wave-plan
figure's titles read at 12 px or more, and the search finds an error code and a Chinese term."""

from __future__ import annotations

import contextlib
import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import REPO
from real_browser import WINDOW, browser_page
from kb_tools.kb.pages import load_kb
from kb_tools.outputs.notebook_runner import execute
from kb_tools.outputs.site import build_site

# its module fixture is costly: every test of the module on one worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("site")

SCREENSHOTS = REPO / "build" / "test-output"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets: list[str] = []
        self.images = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images += 1
        for key in ("href", "src"):
            if attrs.get(key):
                self.targets.append(attrs[key])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text("utf-8", errors="replace"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    executed = tmp / "notebooks"
    # a figure, and trace and work tables as DataFrames
    source = REPO / "notebooks" / "wrapper_boundary.py"
    result = execute(source, executed, ["cpu"], html=False)
    assert result.error is None, result.error
    out = tmp / "site"
    # one notebook executed, the others not: the build covers both kinds of notebook page
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert build_site(REPO, load_kb(REPO), out, executed, REPO / "ops") == 0
    assert sorted(p.name for p in tmp.iterdir()) == ["notebooks", "site"], "the build wrote beside its output folder"
    (tmp / "sphinx-stderr.txt").write_text(err.getvalue())
    return out, source.stem


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_index_starts_a_newcomer_above_the_fold(site):
    out, _ = site
    html = (out / "index.html").read_text()
    body = _text(html[html.index('id="furo-main-content"'):html.index("</article>")])
    for job in ("learn the rules", "review one operator", "fill a KB_USAGE skeleton"):
        assert job in body, job
    order = [body.index(f"{n}") for n in ("The wrapper boundary", "Promote", "Precision metrics", "Integer narrowing",
                                          "Wave expansion", "Random statistics")]
    assert order == sorted(order), "the notebooks are not listed in reading order"
    for spec in (REPO / "ops").glob("*.yaml"):
        assert f'href="operators/{spec.stem}.html"' in html, spec.stem
    assert len(body) < 2500, "the index body is more than a screen: the rule lists belong to the group pages"


def _sidebar_groups(page: Path) -> dict[str, bool]:
    """Each folding group of the sidebar (furo's toctree-l1 with children) and whether it is open."""
    html = page.read_text()
    side = html[html.index('class="sidebar-tree"'):html.index('class="main"')]
    groups = re.findall(r'<li class="toctree-l1[^"]*has-children"><a [^>]*>([^<]+)</a><input ([^>]*)>', side)
    return {name: 'checked=""' in attrs for name, attrs in groups}


def test_sidebar_groups_pages_by_kind(site):
    out, _ = site
    groups = _sidebar_groups(out / "index.html")
    assert {"Constraints", "Patterns", "Playbooks", "Notebooks", "Operators"} <= set(groups), groups
    assert not any(groups.values()), f"the index's sidebar opens a group: {groups}"
    opened = _sidebar_groups(out / "kb" / "constraints" / "wrapper-boundary.html")
    assert [name for name, is_open in opened.items() if is_open] == ["Constraints"], opened  # the page's own group
    kb = load_kb(REPO)
    group = (out / "constraints.html").read_text()
    assert all(f"kb/{p.rel_path[:-3]}.html" in group for p in kb.pages.values() if p.kind == "constraint")


def test_notebook_tables_render_as_tables(site):
    out, stem = site
    html = (out / "notebooks" / f"{stem}.html").read_text()
    assert html.count("<table") >= 3, "the trace and work DataFrames are not HTML tables"
    assert "| ATen op |" not in html and "|---" not in html, "a Markdown pipe table is shown raw"
    assert "USDT:" not in html and "without encryption" not in html


def test_every_page_and_link_resolves(site):
    out, _ = site
    pages = sorted(out.rglob("*.html"))
    kb = load_kb(REPO)
    assert len(pages) >= len(kb.pages) + len(list((REPO / "ops").glob("*.yaml"))) + 3
    broken = []
    for page in pages:
        for target in _parse(page).targets:
            parts = urlsplit(target)
            if parts.scheme or target.startswith(("#", "mailto:", "data:")):
                continue
            path = unquote(parts.path)
            if path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(out)} -> {target}")
    assert not broken, broken[:10]


def test_kb_page_has_its_fact_box_and_operators(site):
    out, _ = site
    html = (out / "kb" / "constraints" / "golden-promote.html").read_text()
    assert "Facts" in html and "applies to" in html and "../../operators/softmax.html" in html


def test_a_notebook_page_shows_the_facts_of_the_rules_it_proves(site):
    out, stem = site
    html = (out / "notebooks" / f"{stem}.html").read_text()
    page = load_kb(REPO).pages["wrapper-boundary"]
    assert "<details>" in html and "../kb/constraints/wrapper-boundary.html" in html
    assert all(inv.id in html for inv in page.invariants)


def test_operator_review_and_router_are_there(site):
    out, _ = site
    assert "Design review: bernoulli" in (out / "operators" / "bernoulli.html").read_text()
    assert "decide-host-work" in (out / "router.html").read_text()
    guide = (out / "bring-your-own-operator.html").read_text()  # issue 41.7: the guide, linked from the index
    assert "Bring your own operator" in guide and "SP040" in guide
    assert 'href="bring-your-own-operator.html"' in (out / "index.html").read_text()


def test_site_refuses_a_missing_notebooks_folder(kbt, tmp_path):
    out = tmp_path / "out"
    result = kbt("site", "-o", out, "--notebooks", tmp_path / "nope")
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.strip().count("\n") == 0 and "nope" in result.err and "ST002" in result.err
    assert list(tmp_path.iterdir()) == [], "a refused build wrote files"


def test_site_refuses_a_file_as_output(kbt, tmp_path):
    target = tmp_path / "site"
    target.write_text("mine")
    result = kbt("site", "-o", target)
    assert result.code == 2 and "ST001" in result.err and target.read_text() == "mine"


def test_unexecuted_notebooks_build_without_warnings(site):
    """Notebooks not executed show their sources, and Sphinx has nothing to warn about."""
    out, stem = site
    err = (out.parent / "sphinx-stderr.txt").read_text()
    assert "WARNING" not in err, err[:2000]
    assert stem != "promote" and "has not been executed" in (out / "notebooks" / "promote.html").read_text()


REVIEW_HEIGHT = 12_000  # px at a 1,400 px window: a review a reader can scroll through
# every page's width and height, and its code and output blocks: how many, how many scroll sideways
_MEASURE = """() => { const blocks = [...document.querySelectorAll('article pre')];
  return {width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
          blocks: blocks.length, scrolled: blocks.filter(b => b.scrollWidth > b.clientWidth + 1).length,
          column: document.querySelector('article').clientWidth, title: document.title,
          figures: [...document.querySelectorAll('article img')].filter(i => i.complete && i.naturalWidth > 0).length}; }"""


def _wave_title_px(column: float) -> float:
    """The height of the wave-plan figure's smallest panel title on a page whose column is
    ``column`` px wide (an image wider than the column is scaled down to it)."""
    import matplotlib

    matplotlib.use("Agg")
    from kb_tools.memory.wave_figure import draw_wave_plans

    figure = draw_wave_plans((4096, 1_000_000), (1, 2, 4, 8))
    renderer = figure.canvas.get_renderer()
    width = figure.get_tightbbox(renderer).width * figure.dpi  # the PNG's width (inches): the inline backend crops so
    titles = min(ax.title.get_window_extent(renderer).height for ax in figure.axes if ax.get_visible())
    return titles * min(1.0, column / width)


def _search(page, out: Path, query: str) -> list[str]:
    from urllib.parse import quote

    page.goto(f"{(out / 'search.html').as_uri()}?q={quote(query)}")
    page.wait_for_selector("#search-results .search-summary", state="attached")
    return page.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.getAttribute('href'))")


def test_real_browser_pages_fit_the_window_and_search_finds(site):
    out, stem = site
    with browser_page() as page:
        measured = {}
        for html in sorted(out.rglob("*.html")):
            page.goto(html.as_uri())
            measured[html.relative_to(out).as_posix()] = page.evaluate(_MEASURE)
        assert all("opkb" in m["title"] for m in measured.values())
        assert measured[f"notebooks/{stem}.html"]["figures"] >= 1, "the executed notebook page shows no figure"
        page.goto((out / "notebooks" / f"{stem}.html").as_uri())
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"site_notebook_{stem}.png")
        wide = {rel: m["width"] for rel, m in measured.items() if m["width"] > WINDOW["width"]}
        assert not wide, f"pages wider than the {WINDOW['width']} px window: {wide}"
        blocks = sum(m["blocks"] for m in measured.values())
        scrolled = {rel: m["scrolled"] for rel, m in measured.items() if m["scrolled"]}
        assert blocks > 50 and sum(scrolled.values()) * 10 <= blocks, f"of {blocks} blocks these scroll sideways: {scrolled}"
        reviews = {rel: m["height"] for rel, m in measured.items() if rel.startswith("operators/")}
        assert len(reviews) == len(list((REPO / "ops").glob("*.yaml")))
        tall = {rel: height for rel, height in reviews.items() if height >= REVIEW_HEIGHT}
        assert not tall, f"review pages {REVIEW_HEIGHT} px or taller: {tall}"
        # the wave-plan figure's panel titles, at the scale a notebook page's column shows the figure
        assert _wave_title_px(measured[f"notebooks/{stem}.html"]["column"]) >= 12
        assert "kb/constraints/wrapper-boundary.html" in _search(page, out, "561103")
        found = _search(page, out, "精度")
        assert len([href for href in found if href != "ask.html"]) >= 3, found
