"""Drives headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: requests on fd 3, answers on fd 4, each a JSON
text ended by NUL), so that a test can measure the page as laid out
(scroll widths, links, sorting) at a chosen window size, with scripting on
or off, and keep screenshots. Standard library only; run by Debian's
/usr/bin/python3.

  python3 page_browser.py --base URL --out DIR --checks first-screen,...

Prints one line per check ("ok ..." or "FAIL ...") and exits 1 when any
failed. Checks:
  first-screen  at 1280x800 and 1920x1080: / has no sideways scroll, the
                cards are on the first screen, the fabric picture fits;
                every card's link answers 200 and its #fragment exists;
                screenshots first-screen-WxH.png
  jobs-sort     /jobs sorted in place by a click (script on) and by its
                header links (script off); /job/ID from the table shows
                the ring
  scripting-off the tables of /jobs, /health and /lint render without script
  down-cable    a cable whose ports are Down is drawn on / as a dotted red
                line and listed on /lint with its state; screenshot
                down-cable.png
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium="chromium"):
        self.profile = tempfile.mkdtemp(prefix="page-browser-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Network.enable", session=True)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("chromium answered nothing in time")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        text, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(text)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, method, timeout=60):
        """Waits for `method`; the events before it stay in self.events."""
        deadline = time.time() + timeout
        if any(e.get("method") == method for e in self.events):
            return
        while True:
            e = self._read_message(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def window(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def scripting(self, on):
        self.call("Emulation.setScriptExecutionDisabled", {"value": not on}, session=True)

    def open(self, url):
        """Loads `url`; returns the HTTP status of the document."""
        self.events = []
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")
        statuses = [e["params"]["response"]["status"] for e in self.events
                    if e.get("method") == "Network.responseReceived" and e["params"].get("type") == "Document"]
        return statuses[-1] if statuses else None

    def eval(self, expression):
        result = self.call("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           session=True)
        if "exceptionDetails" in result:
            raise RuntimeError("%s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path, scale=1.0):
        """The window as a PNG; `scale` below 1 shrinks it (docs/page-overview.png)."""
        params = {"format": "png"}
        if scale != 1.0:
            w, h = self.eval("[innerWidth, innerHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": scale}
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


class Checks:
    def __init__(self, browser, base, out):
        self.b, self.base, self.out = browser, base.rstrip("/"), out
        self.failed = 0

    def expect(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failed += 1

    def first_screen(self):
        for width, height in ((1280, 800), (1920, 1080)):
            self.b.window(width, height)
            self.b.scripting(True)
            self.b.open(self.base + "/")
            size = "%dx%d" % (width, height)
            m = self.b.eval("""(() => {
              const d = document.documentElement, svg = document.querySelector('#picture svg');
              const cards = [...document.querySelectorAll('.card')];
              return {scroll: d.scrollWidth, client: d.clientWidth,
                      svg: svg ? svg.getBoundingClientRect().width : -1,
                      picture: svg ? svg.parentNode.clientWidth : -1,
                      cards: cards.length,
                      below: cards.filter(c => c.getBoundingClientRect().bottom > innerHeight).length,
                      links: cards.map(c => { const a = c.querySelector('a.card-link');
                                              return a ? a.getAttribute('href') : null; })};
            })()""")
            self.expect(m["scroll"] <= m["client"],
                        "%s: no sideways scroll on / (scrollWidth %d, clientWidth %d)" % (size, m["scroll"], m["client"]))
            self.expect(0 <= m["svg"] <= m["picture"] + 1,
                        "%s: the fabric picture fits its box (%.0f <= %d px)" % (size, m["svg"], m["picture"]))
            self.expect(m["cards"] >= 6 and m["below"] == 0,
                        "%s: %d cards, %d of them below the first screen" % (size, m["cards"], m["below"]))
            self.b.screenshot(os.path.join(self.out, "first-screen-%s.png" % size))
            if width == 1280:
                self.b.screenshot(os.path.join(self.out, "first-screen-small.png"), scale=0.6)
            self.expect(all(m["links"]), "%s: every card has a link: %s" % (size, m["links"]))
            for link in filter(None, m["links"]):
                self.card_link(link, size)

    def card_link(self, link, size):
        status = self.b.open(self.base + link)
        self.expect(status == 200, "%s: card link %s answers %s" % (size, link, status))
        fragment = link.split("#", 1)[1] if "#" in link else ""
        found = self.b.eval("""(() => { const f = %s;
          return !!document.querySelector('h1') && (!f || !!document.getElementById(f)); })()""" % json.dumps(fragment))
        title = self.b.eval("document.title")
        self.expect(found and not title.startswith(("404", "not found", "error")),
                    "%s: card link %s opens '%s'%s" % (size, link, title, " with #" + fragment if fragment else ""))
        scroll = self.b.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        self.expect(scroll <= 0, "%s: %s has no sideways scroll (%d px over)" % (size, link, scroll))

    def column(self, key):
        return self.b.eval("[...document.querySelectorAll('#jobs tbody tr')].map(r => r.dataset.%s)" % key)

    def jobs_sort(self):
        self.b.window(1280, 800)
        self.b.scripting(True)
        self.b.open(self.base + "/jobs?sort=job&order=asc")
        jobs = [float(v) for v in self.column("job")]
        self.expect(len(jobs) >= 2 and jobs == sorted(jobs), "/jobs?sort=job&order=asc: %s" % jobs)
        self.b.eval("document.querySelector('#jobs th a[data-key=slowdown]').click(), 0")
        slow = [float(v or 0) for v in self.column("slowdown")]
        self.expect(slow == sorted(slow, reverse=True), "a click on 'estimate / ideal' sorts in place, slowest first: %s" % slow)
        url = self.b.eval("location.search")
        self.expect("sort=slowdown" in url, "the address follows the sort: %s" % url)
        self.b.scripting(False)
        self.b.open(self.base + "/jobs?sort=job&order=asc")
        href = self.b.eval("document.querySelector('#jobs th a[data-key=slowdown]').getAttribute('href')")
        self.b.open(self.base + href)
        slow = [float(v or 0) for v in self.column("slowdown")]
        self.expect(slow == sorted(slow, reverse=True) and len(slow) >= 2,
                    "scripting off: the header link %s sorts on the server: %s" % (href, slow))
        self.b.scripting(True)
        first = self.b.eval("document.querySelector('#jobs tbody tr a').getAttribute('href')")
        self.b.open(self.base + first)
        rings = self.b.eval("document.querySelectorAll('#picture svg g.edge.ring').length")
        self.expect(rings > 0, "%s draws its ring on the fabric (%d ring lines)" % (first, rings))
        self.b.screenshot(os.path.join(self.out, "job-ring.png"))

    def scripting_off(self):
        self.b.window(1280, 800)
        self.b.scripting(False)
        for path, table in (("/jobs", "jobs"), ("/health", "health"), ("/lint", "faults")):
            self.b.open(self.base + path)
            rows = self.b.eval("document.querySelectorAll('#%s tr').length" % table)
            self.expect(rows > 1, "scripting off: %s shows table #%s with %d rows" % (path, table, rows))
        self.b.open(self.base + "/health")
        order = self.b.eval("[...document.querySelectorAll('#health tbody tr')].map(r => r.className)")
        sick = [c == "sick" for c in order]
        self.expect(any(sick) and sick == sorted(sick, reverse=True), "/health lists the sick first: %s" % order[:6])
        self.b.screenshot(os.path.join(self.out, "health.png"))
        self.b.scripting(True)

    def down_cable(self):
        self.b.window(1280, 800)
        self.b.scripting(True)
        self.b.open(self.base + "/")
        lines = self.b.eval("""[...document.querySelectorAll('#picture svg g.edge.down')].map(g => {
              const p = g.querySelector('path'), s = getComputedStyle(p), a = g.querySelector('a');
              return {stroke: s.stroke, dashes: s.strokeDasharray,
                      tooltip: a ? (a.getAttribute('xlink:title') || a.getAttribute('title') || '') : ''}; })""")
        self.expect(len(lines) >= 1, "/ draws %d down cable line(s)" % len(lines))
        for line in lines:
            self.expect(line["stroke"] == "rgb(214, 39, 40)" and line["dashes"] not in ("", "none"),
                        "a down cable is dotted red: stroke %s, dashes %s" % (line["stroke"], line["dashes"]))
        self.b.screenshot(os.path.join(self.out, "down-cable.png"))
        self.b.open(self.base + "/lint")
        # Each listed cable's subject cell, "leaf03:9 <-> spine01:5".
        cables = self.b.eval("""[...document.querySelectorAll('#faults tr')]
              .filter(r => r.textContent.includes('port state is Down'))
              .map(r => [...r.cells].map(c => c.textContent.trim()).find(t => t.includes(' <-> ')) || '')""")
        self.expect(len(cables) == len(lines) and all(cables), "/lint lists the down cable(s): %s" % cables)
        for line in lines:
            named = [c for c in cables if c + " " in line["tooltip"]]
            self.expect(bool(named), "the line's tooltip names a listed cable: %s" % line["tooltip"][:200])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--checks", default="first-screen,jobs-sort,scripting-off")
    args = ap.parse_args()
    browser = Browser()
    checks = Checks(browser, args.base, args.out)
    try:
        for name in args.checks.split(","):
            getattr(checks, name.replace("-", "_"))()
    finally:
        browser.close()
    print("%d failed" % checks.failed)
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
