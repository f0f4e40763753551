#!/usr/bin/python3
"""The HTTP client of bench/console-scale.sh (issue #37): logs in to the console served
by gunicorn, then times requests per case and prints one line each,

    NAME p50_ms=… p95_ms=… n=R

after WARMUP untimed requests of the same URL. The cases, in this order:

  first_page        GET /
  search            GET /?q=SEARCH
  sort_used         GET /?sort=used&dir=desc
  keyset_page_1000  from /, follows each page's <a rel="next" href="…"> (an opaque query
                    string) to page 1,000, or to the last page if there are fewer, checking
                    that no image row appears twice; then times that page's URL
  image_page        GET the href of the first <a class="image-link"> of the first page
  progress_json     GET /runs/RUN_ID/ (the latest run's progress, JSON)

Every answer must be HTTP 200 (a redirect is not followed: it fails too); the first
failure ends the bench with exit status 1, printing the status and the first 500 bytes.
Times are wall times of one request, from sending it to the last byte of the answer, on
one client connection (reopened when gunicorn closes it: its sync workers answer with
Connection: close). Notes (pages walked, answer sizes, fallbacks) go to stderr.

The password of --user comes from the environment (RBDSYNC_BENCH_PASSWORD), never argv.
Python's standard library only.
"""
import argparse
import html.parser
import http.client
import http.cookies
import json
import math
import os
import sys
import time
import urllib.parse

CASES = ("first_page", "search", "sort_used", "keyset_page_1000", "image_page", "progress_json")
KEYSET_PAGE = 1000


class BenchFailure(Exception):
    pass


def note(message):
    print(f"console_http.py: {message}", file=sys.stderr, flush=True)


class Client:
    """One keep-alive connection (reopened by http.client when the server closes it),
    with the cookies the server set."""

    def __init__(self, url, timeout):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise BenchFailure(f"--url must be http://HOST:PORT, not {url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout = timeout
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        self.cookies = {}

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes, seconds) of one request."""
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.perf_counter()
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            raise BenchFailure(f"{method} {path}: no answer: {error!r}") from error
        seconds = time.perf_counter() - started
        for header in response.msg.get_all("Set-Cookie") or []:
            cookie = http.cookies.SimpleCookie()
            cookie.load(header)
            for name, morsel in cookie.items():
                self.cookies[name] = morsel.value
        if response.will_close:
            self.connection.close()
        return response.status, response.msg, data, seconds

    def get_ok(self, path):
        """(body, seconds) of a GET that must answer 200."""
        status, _, data, seconds = self.request("GET", path)
        if status != 200:
            raise BenchFailure(f"GET {path}: HTTP {status}, expected 200; first 500 bytes:\n"
                               f"{data[:500].decode('utf-8', 'replace')}")
        return data, seconds


class PageParser(html.parser.HTMLParser):
    """What the bench needs of a page: its image rows' keys, the next page's link and
    the image links. html.parser unescapes attribute values (&amp; and the like)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows = []            # (key, how): how is data-key, image-link or name
        self.next_href = None     # from rel="next"
        self.next_by_text = None  # from an <a> whose text is "next" (no rel)
        self.image_links = []
        self._row = None          # the open image row: {"attrs", "link"}
        self._anchor = None       # the open <a>: {"href", "text"}

    @staticmethod
    def tokens(value):
        return (value or "").split()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            self._close_row()
            if "image" in self.tokens(attrs.get("class")):
                self._row = {"attrs": attrs, "link": None}
        elif tag in ("a", "link"):
            href = attrs.get("href")
            if "next" in self.tokens(attrs.get("rel")) and href is not None and not self.next_href:
                self.next_href = href
            if tag == "a":
                if "image-link" in self.tokens(attrs.get("class")) and href is not None:
                    self.image_links.append(href)
                    if self._row is not None and self._row["link"] is None:
                        self._row["link"] = href
                self._anchor = {"href": href, "text": ""}

    def handle_data(self, data):
        if self._anchor is not None:
            self._anchor["text"] += data

    def handle_endtag(self, tag):
        if tag == "a" and self._anchor is not None:
            if (self._anchor["text"].strip().lower() == "next" and self._anchor["href"] is not None
                    and self.next_by_text is None):
                self.next_by_text = self._anchor["href"]
            self._anchor = None
        elif tag in ("tr", "tbody", "table"):
            self._close_row()

    def close(self):
        super().close()
        self._close_row()

    def _close_row(self):
        if self._row is None:
            return
        attrs = self._row["attrs"]
        if attrs.get("data-key") is not None:
            self.rows.append((attrs["data-key"], "data-key"))
        elif self._row["link"] is not None:
            self.rows.append((self._row["link"], "image-link"))
        else:
            self.rows.append((f"{attrs.get('data-pool')}/{attrs.get('data-name')}", "name"))
        self._row = None


def parse(data):
    parser = PageParser()
    parser.feed(data.decode("utf-8", "replace"))
    parser.close()
    return parser


def percentile(samples, p):
    """Nearest rank: the smallest sample with at least p% of the samples at or below it."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def wait_until_serving(client, deadline_seconds, server_pid):
    """Polls the login page until it answers 200; fails as soon as the server's process
    is gone, or after deadline_seconds."""
    deadline = time.monotonic() + deadline_seconds
    last = None
    while True:
        if server_pid:
            try:
                os.kill(server_pid, 0)
            except ProcessLookupError:
                raise BenchFailure(f"the server (pid {server_pid}) exited before it answered")
        try:
            status, _, data, _ = client.request("GET", "/accounts/login/")
            if status == 200:
                return
            last = f"HTTP {status}: {data[:500].decode('utf-8', 'replace')}"
        except BenchFailure as error:
            last = str(error)
        if time.monotonic() > deadline:
            raise BenchFailure(f"no answer 200 from the login page within {deadline_seconds} s "
                               f"(last: {last})")
        time.sleep(0.1)  # the polling interval, not a synchronisation


class LoginFormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.csrf = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name") == "csrfmiddlewaretoken":
            self.csrf = attrs.get("value")


def log_in(client, user, password):
    """Django's LoginView: the form's CSRF token and cookie, a POST, the session cookie."""
    data, _ = client.get_ok("/accounts/login/")
    form = LoginFormParser()
    form.feed(data.decode("utf-8", "replace"))
    if not form.csrf or "csrftoken" not in client.cookies:
        raise BenchFailure("the login page has no CSRF token (form field and cookie)")
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": form.csrf, "username": user,
                                   "password": password, "next": "/"})
    status, headers, data, _ = client.request(
        "POST", "/accounts/login/", body=body,
        headers={"Content-Type": "application/x-www-form-urlencoded",
                 "Referer": f"http://{client.host}:{client.port}/accounts/login/"})
    if status != 302 or "sessionid" not in client.cookies:
        raise BenchFailure(f"login as {user!r} failed: HTTP {status} (Location "
                           f"{headers.get('Location')}); first 500 bytes:\n"
                           f"{data[:500].decode('utf-8', 'replace')}")


def walk_to_keyset_page(client, target):
    """Follows rel="next" from / to page `target` (or the last); returns its path."""
    path = "/"
    seen = {}
    fallbacks = set()
    page_seconds = []
    rows = 0
    page = 1
    started = time.perf_counter()
    while True:
        data, seconds = client.get_ok(path)
        page_seconds.append(seconds)
        parsed = parse(data)
        if not parsed.rows:
            raise BenchFailure(f"page {page} ({path}) has no image row")
        for key, how in parsed.rows:
            if how != "data-key":
                fallbacks.add(how)
            if key in seen:
                raise BenchFailure(f"image row {key!r} appears twice: on page {seen[key]} and on "
                                   f"page {page} ({path})")
            seen[key] = page
        rows += len(parsed.rows)
        href = parsed.next_href
        if href is None and parsed.next_by_text is not None:
            href = parsed.next_by_text
            fallbacks.add("next-by-text")
        if page == target or href is None:
            break
        path = urllib.parse.urljoin(path, href)
        page += 1
    walk = time.perf_counter() - started
    note(f"keyset walk: {page} pages ({'the last' if page < target else 'target'} one: {path}), "
         f"{rows} image rows, none twice, in {walk:.1f} s; per page p50 "
         f"{percentile(page_seconds, 50) * 1000:.1f} ms, p95 "
         f"{percentile(page_seconds, 95) * 1000:.1f} ms, max {max(page_seconds) * 1000:.1f} ms")
    if "next-by-text" in fallbacks:
        note("FALLBACK: the pages have no <a rel=\"next\">; followed the link whose text is "
             "'next' instead (the app predates the keyset contract)")
    if "image-link" in fallbacks or "name" in fallbacks:
        note("FALLBACK: image rows without data-key; rows told apart by "
             + (" and ".join(sorted(fallbacks - {"next-by-text"})))
             + " (image-link: the row's <a class=\"image-link\"> href; name: data-pool/data-name)")
    return path


def time_case(client, name, path, requests, warmup, check=None):
    for _ in range(warmup):
        client.get_ok(path)
    samples = []
    size = 0
    for _ in range(requests):
        data, seconds = client.get_ok(path)
        samples.append(seconds)
        size = len(data)
    if check:
        check(data)
    note(f"{name}: GET {path}: {size} bytes")
    print(f"{name} p50_ms={percentile(samples, 50) * 1000:.1f} "
          f"p95_ms={percentile(samples, 95) * 1000:.1f} n={requests}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--user", required=True)
    parser.add_argument("--run-id", required=True, help="the run whose progress JSON is timed")
    parser.add_argument("--search", required=True, help="the search case's ?q=")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--keyset-page", type=int, default=KEYSET_PAGE)
    parser.add_argument("--only", help="comma-separated cases (default: all)")
    parser.add_argument("--server-pid", type=int, help="fail at once if this process is gone")
    parser.add_argument("--wait", type=float, default=60.0,
                        help="seconds to wait for the server to answer")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    args = parser.parse_args()
    cases = args.only.split(",") if args.only else list(CASES)
    unknown = [case for case in cases if case not in CASES]
    if unknown or args.requests < 1 or args.warmup < 0 or args.keyset_page < 1:
        parser.error(f"unknown case(s) {unknown}; cases are {', '.join(CASES)}" if unknown
                     else "--requests >= 1, --warmup >= 0, --keyset-page >= 1")
    password = os.environ.get("RBDSYNC_BENCH_PASSWORD")
    if not password:
        parser.error("RBDSYNC_BENCH_PASSWORD is not set")

    client = Client(args.url, args.timeout)
    try:
        wait_until_serving(client, args.wait, args.server_pid)
        log_in(client, args.user, password)
        first, _ = client.get_ok("/")
        if not parse(first).rows:
            raise BenchFailure("the first page (/) has no image row")

        def progress_check(data):
            answer = json.loads(data)
            if answer.get("run_id") != args.run_id:
                raise BenchFailure(f"/runs/{args.run_id}/ answered {answer!r}")

        for case in CASES:
            if case not in cases:
                continue
            check = None
            if case == "first_page":
                path = "/"
            elif case == "search":
                path = "/?" + urllib.parse.urlencode({"q": args.search})
            elif case == "sort_used":
                path = "/?sort=used&dir=desc"
            elif case == "keyset_page_1000":
                path = walk_to_keyset_page(client, args.keyset_page)
            elif case == "image_page":
                links = parse(first).image_links
                if not links:
                    raise BenchFailure("the first page has no <a class=\"image-link\" href=…>")
                path = urllib.parse.urljoin("/", links[0])
            else:
                path = f"/runs/{args.run_id}/"
                check = progress_check
            time_case(client, case, path, args.requests, args.warmup, check)
    except BenchFailure as failure:
        note(f"FAILED: {failure}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
