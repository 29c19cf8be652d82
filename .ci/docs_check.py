"""The built site read in a real browser (`make docs-check`, after `make docs`; .ci/run runs it).

Every page of build/site/ is served on 127.0.0.1 and loaded in headless Chromium (Debian's package, driven by
Playwright with ``executable_path``; no browser is downloaded) with every request to another host blocked.
A page fails on: a request to another host, a failed request or an HTTP error, a console error or an
uncaught exception, an image that did not decode, a formula (``<math>``) laid out with no size; and the API
reference must document every name of each package's ``__all__`` (`missing_api_names`). Screenshots
of four pages at 1,400 px go to build/docs-check/.

    python .ci/docs_check.py [--site build/site] [--out build/docs-check] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import importlib
import importlib.util
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Request, Route, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: The pages photographed: the landing page, a tutorial, the theory page and an API page.
SCREENSHOTS = {"index.html": "landing.png", "tutorials/measure/index.html": "tutorial-measure.png",
               "theory/index.html": "theory.png", "api/algorithms/index.html": "api-algorithms.png"}
WIDTH = 1400

# Run in the page: <details> opened (a formula inside a closed one has no box), then every image and every
# formula measured.
_INSPECT = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const math = [...document.querySelectorAll('article math')];
  const flat = math.filter(m => { const r = m.getBoundingClientRect(); return !(r.width && r.height); })
    .map(m => m.textContent.slice(0, 60));
  const untypeset = (document.querySelector('article') || document.body).innerHTML.includes(':math:<code>');
  return {images, flat, formulas: math.length, untypeset};
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(site: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def missing_api_names(site: Path) -> list[str]:
    """The exported names the built API pages do not document, as ``api/<package>: name`` lines.

    Parameters
    ----------
    site : pathlib.Path

    Returns
    -------
    list of str
    """
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    missing = []
    for package in ("bounds", "instances", "oracles", "algorithms", "verify"):
        page = site / "api" / package / "index.html"
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        ids = set(re.findall(r'<h[1-6] id="([^"]+)"', text))
        exported = importlib.import_module(f"decbounds.{package}").__all__
        missing += [f"api/{package}: {name}" for name in exported
                    if html.escape(hooks.api_path(f"decbounds.{package}", name)) not in ids]
    return missing


def _blocker(host: str, found: list[str]) -> Callable[[Route, Request], None]:
    """A route handler: requests to `host` go through, any other is aborted and written into `found`."""

    def handle(route: Route, request: Request) -> None:
        if urlsplit(request.url).netloc == host or request.url.startswith("data:"):
            route.continue_()
        else:
            found.append(f"request to another host: {request.url}")
            route.abort()

    return handle


def check_site(site: Path, out: Path, chromium: str) -> list[str]:
    """Load every page of `site`; return the problems found (empty: the site passes).

    Parameters
    ----------
    site : pathlib.Path
        The built site (``make docs`` writes build/site/).
    out : pathlib.Path
        Where the screenshots go.
    chromium : str
        The browser's executable.

    Returns
    -------
    list of str
        One line per problem, naming the page.
    """
    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("index.html"))
    missing = [page for page in SCREENSHOTS if page not in pages]
    problems = [f"{page}: missing from the site" for page in missing]
    problems += [f"{line} is exported but not documented" for line in missing_api_names(site)]
    out.mkdir(parents=True, exist_ok=True)
    server = _serve(site)
    host = f"127.0.0.1:{server.server_address[1]}"
    formulas = 0
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
            context = browser.new_context(viewport={"width": WIDTH, "height": 900}, service_workers="block")
            for page_path in pages:
                found: list[str] = []
                page = context.new_page()

                page.route("**/*", _blocker(host, found))
                page.on("console", lambda message, found=found: found.append(
                    f"console {message.type}: {message.text}") if message.type == "error" else None)
                page.on("pageerror", lambda error, found=found: found.append(f"exception: {error}"))
                page.on("requestfailed", lambda request, found=found: found.append(
                    f"failed request: {request.url} ({request.failure})")
                    if urlsplit(request.url).netloc == host else None)
                page.on("response", lambda response, found=found: found.append(
                    f"HTTP {response.status}: {response.url}") if response.status >= 400 else None)
                url = f"http://{host}/{page_path.removesuffix('index.html')}"
                page.goto(url, wait_until="load")
                page.wait_for_load_state("networkidle")
                result = page.evaluate(_INSPECT)
                formulas += result["formulas"]
                found += [f"image not decoded: {src}" for src in result["images"]]
                found += [f"formula with no size: {text!r}" for text in result["flat"]]
                found += ["a docstring's :math: role left as text"] if result["untypeset"] else []
                if page_path in SCREENSHOTS:
                    page.screenshot(path=str(out / SCREENSHOTS[page_path]), full_page=False)
                problems += [f"{page_path}: {line}" for line in found]
                page.close()
            browser.close()
    finally:
        server.shutdown()
    print(f"docs-check: {len(pages)} pages, {formulas} formulas laid out, screenshots in {out}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """The command line; the exit status is 1 when a page has a problem."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "docs-check")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"docs-check: no site at {args.site}; run `make docs` first", file=sys.stderr)
        return 2
    problems = check_site(args.site, args.out, args.chromium)
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
