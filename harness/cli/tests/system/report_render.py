"""Renders an HTML file in headless Chromium (Debian's chromium) the way a reader's browser
would, and says what happened: the console messages the page caused, the SVG elements in the
DOM Chromium built, and the screenshot's size and number of distinct colours."""
import collections
import html.parser
import re
import subprocess
import tempfile

from PIL import Image

CHROMIUM = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
            # Nothing may leave the file: every host name resolves to nothing.
            "--host-resolver-rules=MAP * ~NOTFOUND"]

Rendered = collections.namedtuple("Rendered", "console svg_count width height colours")


class _SvgCounter(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.svg = 0

    def handle_starttag(self, tag, attrs):
        self.svg += tag == "svg"


def render_report(path, png, width=1280, height=2400):
    with tempfile.TemporaryDirectory(prefix="rocehil-chromium-") as profile:
        shot = subprocess.run(CHROMIUM + [f"--user-data-dir={profile}",
                                          f"--window-size={width},{height}",
                                          f"--screenshot={png}", f"file://{path}"],
                              capture_output=True, text=True, timeout=120)
    if shot.returncode != 0:
        raise AssertionError(f"chromium failed: {shot.stderr[-2000:]}")
    # Chromium logs each console message of the page as INFO:CONSOLE(line) "text", source: ...
    console = [line for line in shot.stderr.splitlines() if re.search(r":CONSOLE[(:]", line)]
    with tempfile.TemporaryDirectory(prefix="rocehil-chromium-") as profile:
        dom = subprocess.run(CHROMIUM + [f"--user-data-dir={profile}", "--dump-dom",
                                         f"file://{path}"],
                             capture_output=True, text=True, timeout=120).stdout
    counter = _SvgCounter()
    counter.feed(dom)
    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20) or []
        return Rendered(console, counter.svg, image.width, image.height, len(colours))
