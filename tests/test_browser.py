"""The built book in a real browser: headless Chromium, driven by Playwright, on a page served from
127.0.0.1 with the local widget manager. No kernel exists anywhere in this test."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading

import pytest
from book_paths import APPENDIX, CHAPTERS, ROOT, TOC

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("Chromium is missing in CI: .ci/run must install Debian's chromium", pytrace=False)
    pytest.skip(
        "Chromium is not installed (apt-get install chromium); the browser test needs it", allow_module_level=True
    )
playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package drives Chromium")


@pytest.fixture(scope="module")
def server(built_book):
    if not built_book.local_widgets:
        pytest.skip("the book was built without the local widget manager (npm missing)")
    handler = functools.partial(QuietHandler, directory=str(built_book.html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1200, "height": 900},
        )
        yield context
        context.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def console_errors(page) -> list[str]:
    """Every console error and uncaught page error the page reports from now on (a live list)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    return errors


VISIBLE_WIDGET_IMAGES = """() => Array.from(document.querySelectorAll('.widget-image'))
    .filter(img => img.offsetParent !== null).map(img => img.src)"""
# every formula typeset: as many MathJax containers as formulas (a page with none is typeset already)
TYPESET = "() => document.querySelectorAll('mjx-container').length >= document.querySelectorAll('.math').length"
BROKEN_IMAGES = """() => Array.from(document.querySelectorAll('img'))
    .filter(img => img.offsetParent !== null && (!img.complete || img.naturalWidth === 0)).map(img => img.src)"""


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_renders_and_its_slider_works_without_a_kernel(browser, server, chapter):
    page = browser.new_page()
    requests, sockets = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("websocket", lambda ws: sockets.append(ws.url))
    errors = console_errors(page)
    page.goto(f"{server}/{chapter}.html", wait_until="load")

    # math: the local MathJax typeset every formula (no raw TeX delimiters left in the text)
    page.wait_for_selector("mjx-container", state="attached", timeout=30000)
    # until MathJax has typeset every formula (a condition, not a fixed pause: a slow machine takes longer)
    page.wait_for_function(TYPESET, timeout=30000)
    assert page.locator("mjx-container").count() >= page.locator(".math").count() > 0
    assert "\\(" not in page.inner_text("main"), "raw TeX left untypeset"

    # the widget manager rendered the sliders and the precomputed images
    page.wait_for_selector(".widget-image", state="attached", timeout=30000)
    sliders = page.locator(".widget-slider, .widget-hslider")
    assert sliders.count() >= 1, "no slider on the page"
    page.wait_for_function(f"({BROKEN_IMAGES})().length === 0", timeout=10000)  # every visible figure loaded

    before = page.evaluate(VISIBLE_WIDGET_IMAGES)
    assert before, "no visible precomputed result"
    control = sliders.first
    control.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    name = chapter.replace("/", "_")
    widget_area = page.locator(".widget-vbox").first
    widget_area.screenshot(path=str(ARTIFACTS / f"{name}_slider_position_0.png"))

    handle = control.locator(".noUi-handle").first
    handle.focus()
    page.keyboard.press("ArrowRight")
    try:  # until the shown result changes, or 10 s: what the assertion below reports
        changed = f"before => JSON.stringify(({VISIBLE_WIDGET_IMAGES})()) !== JSON.stringify(before)"
        page.wait_for_function(changed, arg=before, timeout=10000)
    except playwright.TimeoutError:
        pass
    after = page.evaluate(VISIBLE_WIDGET_IMAGES)
    widget_area.screenshot(path=str(ARTIFACTS / f"{name}_slider_position_1.png"))
    assert after and after != before, "moving the slider did not change the displayed result"

    resized = _tracks_that_resize(page)
    assert resized == [], f"{chapter}: a slider's track changed width as its readout changed: {resized}"

    page.set_viewport_size({"width": DESKTOP, "height": FIRST_SCREEN})
    page.evaluate("window.scrollTo(0, 0)")
    where = page.evaluate(ANSWER_POSITION)
    _record("answer_position.json", chapter, where)
    assert where["answer"] and where["answer_figure"], f"{chapter}: no cell tagged answer, or no figure in it: {where}"
    assert where["answer_figure"][1] <= FIRST_SCREEN, (
        f"{chapter}: the answer's figure ends at {where['answer_figure'][1]} px, below a laptop's first screen "
        f"({DESKTOP} × {FIRST_SCREEN}): {where}"
    )

    kernel_traffic = [u for u in requests if "/api/kernels" in u or "/api/sessions" in u]
    assert kernel_traffic == [] and sockets == [], "the page talked to a kernel"
    outside = [u for u in requests if not u.startswith((server + "/", "data:", "blob:", "about:"))]
    assert outside == [], f"the offline book asked a host other than the local server for {outside}"
    assert errors == [], f"{chapter}: the console reported {errors}"  # the slider's typesetting included
    page.close()


TRACK_WIDTH = """h => Math.round(h.closest('.widget-hslider').querySelector('.slider-container')
    .getBoundingClientRect().width)"""
MAX_POSITIONS = 12  # a slider is stepped through at most this many of its positions


def _tracks_that_resize(page) -> list[str]:
    """Every visible slider stepped from its first position through its next ones by keyboard (issue 48: a
    readout that grew with its value shrank the track, and taps near its end were lost): the sliders whose
    track width changed, with the widths seen. Each slider is left at its first position."""
    out = []
    handles = page.locator(".widget-hslider .noUi-handle")
    for i in range(handles.count()):
        handle = handles.nth(i)
        if not handle.is_visible():
            continue
        handle.focus()
        page.keyboard.press("Home")
        seen = {handle.evaluate(TRACK_WIDTH)}
        for _ in range(MAX_POSITIONS):
            page.keyboard.press("ArrowRight")
            seen.add(handle.evaluate(TRACK_WIDTH))
        page.keyboard.press("Home")
        if len(seen) > 1:
            out.append(f"slider {i}: track widths {sorted(seen)} px")
    return out


# WCAG 2.1 contrast (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio) of every element that holds text
# in the given selector: its colour, faded by the opacity of it and its ancestors, over the colours
# painted behind it (alpha-blended up from the first opaque ancestor). Returns the count and the worst.
CONTRAST = """(sel) => {
  const parse = s => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const blend = (top, bottom, a) => [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a));
  const behind = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let bg = [255, 255, 255]; for (const c of layers.reverse()) bg = blend(c, bg, c[3]); return bg; };
  const opacity = el => { let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    if (el.offsetParent === null || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const bg = behind(el), c = parse(getComputedStyle(el).color), fg = blend(c, bg, c[3] * opacity(el));
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    out.push({ratio: (hi + 0.05) / (lo + 0.05), text: el.textContent.trim().slice(0, 50),
              fg: fg.map(Math.round).join(','), bg: bg.map(Math.round).join(',')}); }
  out.sort((a, b) => a.ratio - b.ratio);
  return {count: out.length, worst: out.slice(0, 3)}; }"""
OUR_TEXT = ", ".join(f"{table}, {table} *" for table in ("table.verdicts", "table.ledger", "table.ledger-coverage"))
WIDGET_TEXT = ".widget-label, .widget-readout, .widget-html-content, .widget-html-content *, .widget-button"
MIN_CONTRAST = 4.5  # WCAG AA for normal-size text
PHONE, DESKTOP = 390, 1280  # CSS pixels: an iPhone 12-15 in portrait; a laptop
READER_VIEWS = [("light", DESKTOP), ("dark", DESKTOP), ("light", PHONE), ("dark", PHONE)]

PHONE_LAYOUT = """() => {
  const right = window.innerWidth + 1, shown = el => el.offsetParent !== null;
  const box = el => el.getBoundingClientRect();
  return {
    page_overflow: document.documentElement.scrollWidth - window.innerWidth,
    narrow_sliders: [...document.querySelectorAll('.widget-slider .noUi-target, .widget-hslider .noUi-target')]
      .filter(shown).map(box).filter(b => b.width < 100 || b.right > right).map(b => Math.round(b.width)),
    clipped_controls: [...document.querySelectorAll('.widget-button, .widget-dropdown select, .widget-readout')]
      .filter(shown).map(box).filter(b => b.right > right).map(b => Math.round(b.right)),
    wide_tables: [...document.querySelectorAll('table.verdicts, table.ledger')].filter(shown)
      .filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).length,
  }; }"""


# Every visible table of the page's text column, measured against the column (issue 48): its width, the
# column's (the article's content box) and how far it reaches past it. A table is never wider than the column,
# also where the theme lets it scroll sideways: its long cells break (verdict_words.code_html breaks a formula
# after its operators) or sit in a scrolling box of their own inside the cell.
WIDE_TABLES = """() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main');
  const style = getComputedStyle(column);
  const room = column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [...column.querySelectorAll('table')].filter(t => t.offsetParent !== null).map(t => {
    const width = t.getBoundingClientRect().width;
    return {width: Math.round(width), column: Math.round(room), past: Math.round(width - room),
            classes: t.className, first: (t.querySelector('td, th') || t).textContent.trim().slice(0, 40)};
  }); }"""


# Words of the verdict and ledger tables cut across two lines although they would fit on one
# ("multilin/gual"): every run of three or more Latin or Greek letters whose client rects span two lines,
# either inside a token (between spaces) narrower than its cell, or wider than its cell itself (a column
# squeezed below one word). A formula longer than its cell may break where the line ends, and CJK text
# breaks between any two characters.
BROKEN_WORDS = r"""() => {
  const out = [];
  const measure = (node, start, end) => {
    const range = document.createRange();
    range.setStart(node, start); range.setEnd(node, end);
    const rects = [...range.getClientRects()].filter(r => r.width > 0);
    return {lines: new Set(rects.map(r => Math.round(r.top))).size, width: rects.reduce((w, r) => w + r.width, 0)};
  };
  for (const table of document.querySelectorAll('table.verdicts, table.ledger')) {
    if (table.offsetParent === null) continue;
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const cell = node.parentElement.closest('td, th');
      if (!cell) continue;
      const style = getComputedStyle(cell);
      const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      for (const token of node.textContent.matchAll(/\S+/g)) {
        const fits = measure(node, token.index, token.index + token[0].length).width < room - 1;
        for (const m of token[0].matchAll(/[A-Za-z\u00C0-\u024F\u0370-\u03FF]{3,}/g)) {
          const start = token.index + m.index, word = measure(node, start, start + m[0].length);
          if (word.lines > 1 && (fits || word.width > room + 1)) out.push(m[0]);  // avoidable, or a column too narrow
        }
      }
    }
  }
  return out.slice(0, 10);
}"""


# The bytes the page loaded (document, scripts, styles, fonts, images): the sum of every entry's body size
# as the local server sent it (uncompressed, as the static book is served by a plain file server).
PAGE_BYTES = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .reduce((sum, e) => sum + (e.encodedBodySize || e.transferSize || 0), 0)"""

# Every visible icon of the theme (Font Awesome classes): drawn by the stylesheet's webfont (a ::before glyph) or by
# an inline SVG. _ext/lean_pages.py drops the theme's fontawesome.js, which drew them as SVGs a second time.
BLANK_ICONS = """() => [...document.querySelectorAll('i[class*="fa-"], span[class*="fa-"]')]
    .filter(i => i.offsetParent !== null)
    .filter(i => { const b = getComputedStyle(i, '::before').content;
                   return !i.querySelector('svg') && (!b || b === 'none' || b === 'normal' || i.offsetWidth === 0); })
    .map(i => i.className).slice(0, 10)"""
PAGE_FILES = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .map(e => new URL(e.name).pathname)"""


def _page_weight(page, html) -> dict:
    """The bytes the page loaded as a plain file server sends them (PAGE_BYTES), and the same files gzipped (as
    GitHub Pages and most static hosts send them): {"plain": bytes, "gzip": bytes}."""
    import gzip
    from urllib.parse import unquote

    files = {html / unquote(path).lstrip("/") for path in page.evaluate(PAGE_FILES)}
    files = {f / "index.html" if f.is_dir() else f for f in files}
    return {"plain": page.evaluate(PAGE_BYTES), "gzip": sum(len(gzip.compress(f.read_bytes())) for f in files)}


# Where a chapter's answer is on a laptop's first screen (issue 48): [top, bottom] of the cell tagged "answer", of the
# figure it shows, and of the page's first figure, in CSS px from the top of the page (None where there is none).
FIRST_SCREEN = 800  # CSS px: the height of a laptop's first screen (1280 × 800); the answer's figure ends above it
ANSWER_POSITION = """() => {
  const span = el => { if (!el) return null; const r = el.getBoundingClientRect();
                       return [Math.round(r.top + window.scrollY), Math.round(r.bottom + window.scrollY)]; };
  const answer = document.querySelector('.tag_answer');
  return {answer: span(answer), answer_figure: span(answer && answer.querySelector('.cell_output img')),
          figure: span([...document.querySelectorAll('.cell_output img, img.widget-image')]
                       .find(img => img.offsetParent !== null))}; }"""


@pytest.mark.parametrize("doc", [TOC["root"], *CHAPTERS, *APPENDIX])
def test_every_page_reads_in_light_and_dark_mode_and_on_a_phone(browser, server, built_book, doc):
    """No console error or page error in any view, and no word of a table cut where it would fit on a
    line. The theme's dark mode puts HTML outputs on a light panel: our tables and the widgets' text must
    keep WCAG AA contrast there as on white. At phone width the sliders keep a usable track, no control is
    cut off, and a verdict table becomes cards instead of running off the screen. Screenshots of each view
    go to test-artifacts/ (kept by CI)."""
    page = browser.new_page()
    errors = console_errors(page)
    name = doc.replace("/", "_")
    ARTIFACTS.mkdir(exist_ok=True)
    problems, widest = [], {}
    for scheme, width in READER_VIEWS:
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server}/{doc}.html", wait_until="load")
        page.wait_for_function(f"document.documentElement.dataset.theme === '{scheme}'", timeout=10000)
        if doc in CHAPTERS:
            page.wait_for_selector(".widget-image", state="attached", timeout=30000)
        page.wait_for_function(TYPESET, timeout=30000)  # the layout measured below is the typeset page's
        page.evaluate("document.fonts.ready.then(() => true)")
        if (scheme, width) == READER_VIEWS[0]:
            _record("page_bytes.json", doc, _page_weight(page, built_book.html))
        view = f"{scheme} at {width} px"
        blank = page.evaluate(BLANK_ICONS)
        if blank:
            problems.append(f"{view}: icons drawn by nothing: {blank}")
        if errors:
            problems.append(f"{view}: console {errors}")
            errors.clear()
        broken = page.evaluate(BROKEN_WORDS)
        if broken:
            problems.append(f"{view}: words cut across lines although they fit: {broken}")
        tables = page.evaluate(WIDE_TABLES)
        widest[width] = max([t["width"] for t in tables], default=0)
        past = [t for t in tables if t["past"] > 1]
        if past:
            problems.append(f"{view}: tables past the column's edge: {past}")
        for what, selector in (("tables", OUR_TEXT), ("widgets", WIDGET_TEXT)):
            found = page.evaluate(CONTRAST, selector)
            if found["count"] and found["worst"][0]["ratio"] < MIN_CONTRAST:
                problems.append(f"{view}, {what}: contrast {found['worst']}")
        if doc in CHAPTERS:
            assert page.evaluate(CONTRAST, OUR_TEXT)["count"] > 0, f"{doc}: no verdict table found"
        if width == PHONE:
            layout = page.evaluate(PHONE_LAYOUT)
            if (
                layout["page_overflow"] > 1
                or layout["narrow_sliders"]
                or layout["clipped_controls"]
                or layout["wide_tables"]
            ):
                problems.append(f"{view}: layout {layout}")
        for what in ("table.verdicts", "table.ledger", ".widget-vbox"):
            if page.locator(what).count():
                page.evaluate(f"document.querySelector('{what}').scrollIntoView()")
                page.wait_for_timeout(300)
                page.screenshot(
                    path=str(ARTIFACTS / f"{name}_{scheme}_{width}_{what.strip('.').replace('.', '_')}.png")
                )
    if errors:
        problems.append(f"after the last view: console {errors}")
    page.close()
    _record("widest_table.json", doc, widest)
    assert not problems, f"{doc}:\n" + "\n".join(problems)


def _record(name: str, doc: str, value) -> None:
    """``value`` under ``doc`` in test-artifacts/``name`` (a table per page: the before/after of issue 48)."""
    import json

    ARTIFACTS.mkdir(exist_ok=True)
    record = ARTIFACTS / name
    table = json.loads(record.read_text()) if record.exists() else {}
    table[doc] = value
    record.write_text(json.dumps(table, indent=1, sort_keys=True))


# Every figure image of the page (cell outputs and slider images, shown or not): the PNG text chunks the
# book's writer left (deepnotes.show.png), its natural width (None for an empty image) and, for a shown
# one, its width on screen. Images load eagerly
# first, so a lazy image far down the page has its real size.
FIGURES = r"""async () => {
  const chunks = bytes => {
    const view = new DataView(bytes.buffer), latin1 = new TextDecoder('latin1'), out = {};
    for (let i = 8; i + 8 <= bytes.length;) {
      const length = view.getUint32(i), type = latin1.decode(bytes.slice(i + 4, i + 8));
      if (type === 'IHDR') out.natural = view.getUint32(i + 8);
      if (type === 'tEXt') { const data = bytes.slice(i + 8, i + 8 + length), zero = data.indexOf(0);
        out[latin1.decode(data.slice(0, zero))] = latin1.decode(data.slice(zero + 1)); }
      i += 12 + length;
    }
    return out;
  };
  const out = [];
  for (const img of document.querySelectorAll('.cell_output img, img.widget-image')) {
    img.loading = 'eager';
    const shown = img.offsetParent !== null;
    if (shown) { try { await img.decode(); } catch (e) {} }
    const found = chunks(new Uint8Array(await (await fetch(img.currentSrc || img.src)).arrayBuffer()));
    out.push({src: (img.getAttribute('src') || '').slice(0, 40), natural: found.natural,
              min_text: found['deepnotes:min-text-px'], problems: found['deepnotes:problems'],
              shown_width: shown ? img.getBoundingClientRect().width : null});
  }
  return out;
}"""


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_is_readable_on_a_laptop_and_a_phone(browser, server, chapter):
    """The smallest text of every shown figure, at the size the page shows it (text px in the PNG × shown
    width / natural width), is ≥ 9 CSS px in a 1280 px window and ≥ 7 px in a 390 px one; every figure,
    shown or behind a slider, came through the book's PNG writer and its legends tell their lines apart.
    The smallest text per page and width goes to test-artifacts/figure_text.json."""
    from deepnotes.show import readable

    page = browser.new_page()
    problems, smallest = [], {}
    for width in (DESKTOP, PHONE):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server}/{chapter}.html", wait_until="load")
        page.wait_for_selector(".widget-image", state="attached", timeout=30000)
        figures = page.evaluate(FIGURES)
        assert figures, f"{chapter}: no figure found"
        sizes = []
        for k, fig in enumerate(figures):
            if fig["natural"] is None and fig["shown_width"] is None:
                continue  # the live panel's image, empty and hidden until a kernel runs it
            if fig["min_text"] is None:
                problems.append(f"{width} px, figure {k} ({fig['src']}): not written by the book's PNG writer")
                continue
            if fig["problems"]:
                problems.append(f"figure {k} ({fig['src']}): {fig['problems']}")
            if fig["shown_width"] and fig["min_text"]:
                sizes.append(float(fig["min_text"]) * fig["shown_width"] / fig["natural"])
                if sizes[-1] < readable.MIN_TEXT_PX[width]:
                    problems.append(f"{width} px, figure {k} ({fig['src']}): smallest text {sizes[-1]:.1f} px")
        smallest[width] = round(min(sizes), 2) if sizes else None
    page.close()
    _record("figure_text.json", chapter, smallest)
    assert not problems, f"{chapter}:\n" + "\n".join(dict.fromkeys(problems))
