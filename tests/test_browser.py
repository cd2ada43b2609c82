"""The built book in a real browser: headless Chromium, driven by Playwright, on a page served from
127.0.0.1 with the local widget manager. No kernel exists anywhere in this test."""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading

import pytest

from book_paths import CHAPTERS, ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-quic", "--disable-sync"]

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("Chromium is missing in CI: .ci/run must install Debian's chromium", pytrace=False)
    pytest.skip("Chromium is not installed (apt-get install chromium); the browser test needs it",
                allow_module_level=True)
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
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True,
            args=FLAGS, viewport={"width": 1200, "height": 900})
        yield context
        context.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


VISIBLE_WIDGET_IMAGES = """() => Array.from(document.querySelectorAll('.widget-image'))
    .filter(img => img.offsetParent !== null).map(img => img.src)"""
BROKEN_IMAGES = """() => Array.from(document.querySelectorAll('img'))
    .filter(img => img.offsetParent !== null && (!img.complete || img.naturalWidth === 0)).map(img => img.src)"""


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_renders_and_its_slider_works_without_a_kernel(browser, server, chapter):
    page = browser.new_page()
    requests, sockets = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{server}/{chapter}.html", wait_until="load")

    # math: the local MathJax typeset every formula (no raw TeX delimiters left in the text)
    page.wait_for_selector("mjx-container", state="attached", timeout=30000)
    page.wait_for_timeout(1500)
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
    page.wait_for_timeout(500)
    after = page.evaluate(VISIBLE_WIDGET_IMAGES)
    widget_area.screenshot(path=str(ARTIFACTS / f"{name}_slider_position_1.png"))
    assert after and after != before, "moving the slider did not change the displayed result"

    kernel_traffic = [u for u in requests if "/api/kernels" in u or "/api/sessions" in u]
    assert kernel_traffic == [] and sockets == [], "the page talked to a kernel"
    outside = [u for u in requests if not u.startswith((server + "/", "data:", "blob:", "about:"))]
    assert outside == [], f"the offline book asked a host other than the local server for {outside}"
    page.close()
