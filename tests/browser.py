"""A headless Chromium for the tests of the pages minivm writes, driven through
ChromeDriver's W3C WebDriver HTTP API with the standard library only (Debian's
`chromium` and `chromium-driver`; no Selenium).

    with Browser() as b:
        b.open("/tmp/p.html")                 # a local file
        b.click("#line-12")                   # a CSS selector
        text = b.text("#stacks")
        value = b.js("return document.title")
        assert b.console_errors() == []
        assert b.network_requests() == []     # a self-contained page fetches nothing
        b.screenshot("/tmp/p.png")

A test that cannot find the browser calls `skip_without_browser()` first: it prints why
and exits with SKIP (ctest's SKIP_RETURN_CODE), rather than pass without looking.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
# The flags a sandboxed root needs, and no background traffic: with the network closed,
# Chromium's own update and sync requests would fail at every start.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
START_TIMEOUT = 30.0


def missing():
    """Why the browser cannot run here, or None."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} not found (Debian package chromium)"
    if shutil.which("chromedriver") is None:
        return "chromedriver not found (Debian package chromium-driver)"
    return None


def skip_without_browser(test_name):
    why = missing()
    if why:
        print(f"{test_name}: SKIP: {why}")
        sys.exit(SKIP)


class WebDriverError(Exception):
    pass


class Browser:
    def __init__(self, width=1400, height=1000):
        why = missing()
        if why:
            raise WebDriverError(why)
        self.profile_dir = tempfile.mkdtemp(prefix="minivm-chromium-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.driver = subprocess.Popen(["chromedriver", f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        self.session = None
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if self._request("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > deadline:
                self.close()
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM,
                                   "args": CHROMIUM_ARGS + [f"--user-data-dir={self.profile_dir}",
                                                            f"--window-size={width},{height}"]},
            "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
        }}}
        self.session = self._request("POST", "/session", caps)["sessionId"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.session is not None:
            try:
                self._request("DELETE", f"/session/{self.session}")
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.driver.poll() is None:
            self.driver.terminate()
            try:
                self.driver.wait(10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def _request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                reply = json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            reply = json.loads(e.read() or b"{}")
            value = reply.get("value", {})
            raise WebDriverError(f"{method} {path}: {value.get('error')}: {value.get('message', '')[:500]}")
        return reply.get("value", reply)

    def _session(self, method, path, body=None):
        return self._request(method, f"/session/{self.session}{path}", body)

    # --- what tests use ---
    def open(self, path):
        self.page_url = "file://" + os.path.abspath(path)
        # Reading a log drains it: what the new-tab page fetched is not the page's.
        self._session("POST", "/se/log", {"type": "performance"})
        self._session("POST", "/se/log", {"type": "browser"})
        self._session("POST", "/url", {"url": self.page_url})

    def js(self, script, *args):
        """Runs `script` as a function body in the page (it may `return` a value)."""
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        found = self._session("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(found.values()))

    def click(self, css):
        self._session("POST", f"/element/{self.find(css)}/click", {})

    def text(self, css):
        return self._session("GET", f"/element/{self.find(css)}/text")

    def type(self, css, keys):
        self._session("POST", f"/element/{self.find(css)}/value", {"text": keys})

    def console_errors(self):
        """The page's console messages of level error (and uncaught exceptions)."""
        entries = self._session("POST", "/se/log", {"type": "browser"})
        return [e["message"] for e in entries if e.get("level") == "SEVERE"]

    def network_requests(self):
        """Every URL the page requested other than itself and inline data: URLs."""
        urls = []
        for e in self._session("POST", "/se/log", {"type": "performance"}):
            msg = json.loads(e["message"])["message"]
            if msg.get("method") != "Network.requestWillBeSent":
                continue
            # Requests made for this page (not the new-tab page Chromium starts with).
            params, page = msg["params"], getattr(self, "page_url", None)
            url = params["request"]["url"]
            if params.get("documentURL") == page and url != page and not url.startswith("data:"):
                urls.append(url)
        return urls

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self._session("GET", "/screenshot")))
