"""The page in headless Chromium (Debian's chromium and chromium-driver through
python3-selenium), against the live server Django's test framework runs, the real
binary, Ceph cluster and database. CTest label browser.

A session of the test holds LOCK TABLE rbdsync.images IN EXCLUSIVE MODE, so the first
run waits in its write phase however fast the machine, until the test has pressed
"Sync now" a second time and seen "already running" name the first run. Screenshots go
to RBDSYNC_TEST_ARTIFACTS. A missing service, browser or driver fails the test."""
import json
import os
import re
import shutil
import tempfile
import time

import rbd
from django.contrib.auth.models import User
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from django.test import tag
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from .ceph import TestPool
from .support import (MIB, add_cluster, add_run, images_table_locked, process_gone,
                      required_env, wait_until, wipe_inventory)
from .test_sync_now import console_settings

# Debian's builds, named: selenium-manager must never try to download a driver.
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
IMAGES = 20
RUN_ID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _attached(element):
    """False once the page that held `element` was replaced."""
    try:
        element.is_enabled()
        return True
    except StaleElementReferenceException:
        return False


def headless_chromium(profile):
    """Debian's Chromium through its chromedriver, headless, with its profile in `profile`."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--window-size=1400,1300",
                     "--no-sandbox",  # Chromium refuses to sandbox as root, as CI runs
                     "--disable-dev-shm-usage",  # containers have a tiny /dev/shm
                     f"--user-data-dir={profile}"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


class Timer:
    """Prints how long each step took: the test's timings are part of its report."""

    def __init__(self):
        self.start = self.last = time.monotonic()

    def step(self, what):
        now = time.monotonic()
        print(f"test_browser: {what}: {now - self.last:.1f}s (total {now - self.start:.1f}s)",
              flush=True)
        self.last = now


class PageDriver:
    """What a test does on the page in self.browser; its class says what to report when a
    wait fails (failure_state)."""

    def wait_for(self, what, condition, seconds=60):
        """Polls `condition` until it returns something true (returned), or fails the test
        after `seconds` with what the class's failure_state() tells."""
        try:
            return WebDriverWait(self.browser, seconds, poll_frequency=0.1).until(
                lambda _: condition())
        except TimeoutException:
            self.fail(f"waited {seconds}s for {what}; {self.failure_state()}")

    def text(self, element_id):
        return self.browser.execute_script(
            "const e = document.getElementById(arguments[0]); "
            "return e ? e.textContent.trim() : null;", element_id)

    def log_in_at(self, url, password):
        """Opens the block-storage page at `url`, logging in as operator when it asks (a
        session outlives a restart of the site: it is in the database)."""
        self.browser.get(url)
        self.wait_for("the login form or the page", lambda: self.browser.find_elements(
            By.ID, "id_username") or self.text("last-run"))
        if self.browser.find_elements(By.ID, "id_username"):
            self.browser.find_element(By.ID, "id_username").send_keys("operator")
            self.browser.find_element(By.ID, "id_password").send_keys(password)
            self.browser.find_element(By.ID, "log-in").click()
        self.wait_for("the block-storage page", lambda: self.text("last-run"))

    def press_for_answer(self):
        """Clicks "Sync now"; returns the server's answer once the page has it."""
        before = self.browser.execute_script(
            "return Number(document.getElementById('sync').dataset.answers || 0);")
        self.browser.find_element(By.ID, "sync-now").click()
        return json.loads(self.wait_for("the answer to Sync now", lambda: self.browser.execute_script(
            "const s = document.getElementById('sync'); "
            "return Number(s.dataset.answers || 0) > arguments[0] ? s.dataset.answer : null;",
            before), seconds=30))


@tag("browser")
class BlockStorageInBrowser(PageDriver, StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls):
        cls.timer = Timer()
        cls.artifacts = required_env("RBDSYNC_TEST_ARTIFACTS")
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="rbdsync-console-browser.")
        cls.addClassCleanup(shutil.rmtree, cls.dir, ignore_errors=True)
        cls.pool = TestPool("django-browser")
        cls.addClassCleanup(cls.pool.close)
        cls.names = {f"img-{n}" for n in range(IMAGES)}
        for number, name in enumerate(sorted(cls.names)):
            cls.pool.create_image(name, written=(number % 4) * 2 * MIB)  # 0 to 6 of 8 MiB
        cls.pool.create_golden_and_clone("golden", "vm-1")
        cls.names |= {"golden", "vm-1"}
        overridden = console_settings(**cls.pool.run_settings(os.path.join(cls.dir, "sync.lock")))
        overridden.enable()
        cls.addClassCleanup(overridden.disable)
        cls.timer.step(f"pool with {len(cls.names)} images")

        cls.browser = headless_chromium(os.path.join(cls.dir, "chromium"))
        cls.addClassCleanup(cls.browser.quit)
        cls.timer.step("chromium started")

    def setUp(self):
        self.password = os.urandom(12).hex()
        User.objects.create_superuser("operator", password=self.password)
        self.pids = []  # the detached runs this test started: gone before the next test
        self.addCleanup(wipe_inventory)
        self.addCleanup(lambda: [wait_until(f"rbd-sync pid {pid} to exit",
                                            lambda pid=pid: process_gone(pid))
                                 for pid in self.pids])

    # ------------------------------------------------------------ helpers

    def failure_state(self):
        self.screenshot("django-console-failure.png", check=False)
        state = {key: self.text(key) for key in ("notice", "progress-text", "last-run")}
        return f"the page shows {state}, images {sorted(self.image_names())}"

    def image_names(self):
        # One script: the table may be swapped out between two element lookups.
        return set(self.browser.execute_script(
            "return [...document.querySelectorAll('#images tr.image')]"
            ".map(row => row.dataset.name);"))

    def progress_visible(self):
        return self.browser.execute_script("return !document.getElementById('progress').hidden;")

    def log_in(self):
        self.log_in_at(self.live_server_url + "/", self.password)

    def press(self):
        """Clicks "Sync now"; returns the server's answer once the page has it."""
        answer = self.press_for_answer()
        if answer["state"] == "started":
            self.pids.append(answer["pid"])
        return answer

    def chart_points(self):
        """Points per dataset of this pool's usage chart, as Chart.js holds them."""
        return self.browser.execute_script(
            "const card = [...document.querySelectorAll('article.pool')]"
            "  .find(c => c.dataset.name === arguments[0]);"
            "const chart = card && Chart.getChart(card.querySelector('canvas'));"
            "return chart ? chart.data.datasets.map(d => [d.label, d.data.length]) : null;",
            self.pool.name)

    def screenshot(self, name, check=True):
        os.makedirs(self.artifacts, exist_ok=True)
        path = os.path.join(self.artifacts, name)
        self.assertTrue(self.browser.save_screenshot(path), path)
        print(f"test_browser: screenshot {path}", flush=True)
        if check:
            with open(path, "rb") as picture:
                self.assertEqual(picture.read(8), b"\x89PNG\r\n\x1a\n", path)
            self.assertGreater(os.path.getsize(path), 10_000, f"{path} is (nearly) empty")

    # ------------------------------------------------------------ the test

    def test_sync_now_twice_then_its_progress_then_a_change_made_with_rbd(self):
        timer = Timer()
        self.log_in()
        self.assertEqual(self.text("last-run"), "Last sync: never")
        self.assertEqual(self.image_names(), set())
        timer.step("logged in")

        # The sync's writes wait behind this session's lock (as behind a long report
        # query), so the first run is still going when the second press arrives.
        with images_table_locked():  # ends: the first run's writes go ahead
            first = self.press()
            self.assertEqual(first["state"], "started", first)
            self.assertRegex(self.text("notice"),
                             rf"^sync started \(pid {first['pid']}\), run {first['run_id']}$")
            progress = self.wait_for(
                "the progress bar to show the run's row",
                lambda: self.progress_visible() and re.fullmatch(
                    r"(?!starting)[a-z]+( \d+/\d+)?", self.text("progress-text") or "")
                and self.text("progress-text"))
            timer.step(f"first press: run {first['run_id']} started, progress '{progress}'")

            second = self.press()
            timer.step("second press answered")
            self.assertEqual(second["state"], "already_running", second)
            self.assertEqual(second["run_id"], first["run_id"], "names the first run")
            notice = self.text("notice")
            self.assertIn("already running: started by web (operator) at ", notice)
            self.assertIn(f"(pid {first['pid']} on ", notice)
            self.assertIn(f"run {first['run_id']})", notice)
            self.assertTrue(self.progress_visible(), "the first run's bar stays up")
            self.screenshot("django-console-already-running.png")

        self.wait_for("the run to end as succeeded",
                      lambda: self.text("notice").startswith("sync succeeded"))
        self.assertEqual(self.text("notice"), f"sync succeeded: {len(self.names)} images, "
                                              f"{len(self.names)} added, 0 changed, 0 removed")
        self.wait_for("the table to show the synced images", lambda: self.image_names() == self.names)
        self.assertFalse(self.progress_visible())
        self.assertTrue(self.text("last-run").startswith("Last sync: succeeded (by web (operator))"),
                        self.text("last-run"))
        points = self.wait_for("the pool's usage chart", self.chart_points)
        self.assertEqual([label for label, _ in points],
                         ["stored", "raw used", "available", "provisioned"])
        self.assertTrue(all(count >= 1 for _, count in points), points)
        timer.step("first run ended, page refreshed, chart drawn")
        self.screenshot("django-console-after-sync.png")

        # A change made with rbd shows after the next press.
        self.pool.create_image("new-a")
        self.pool.remove_image("img-0")
        names = (self.names | {"new-a"}) - {"img-0"}
        third = self.press()
        self.assertEqual(third["state"], "started", third)
        self.wait_for("the table to show new-a, without img-0",
                      lambda: self.image_names() == names)
        self.assertEqual(self.text("notice"), f"sync succeeded: {len(names)} images, 1 added, "
                                              "0 changed, 1 removed")
        timer.step("third press: the change made with rbd shown")
        self.screenshot("django-console.png")

    def image_rows(self):
        """The list's rows as the page shows them: (name, pool) in order."""
        return [tuple(row) for row in self.browser.execute_script(
            "return [...document.querySelectorAll('#images tr.image')]"
            ".map(row => [row.dataset.name, row.dataset.pool]);")]

    def submit_filter(self, query=None, check=()):
        """Types `query` into the search box (if given), ticks the states `check`, and
        submits the GET form with the keyboard, as a user without a mouse would."""
        form = self.browser.find_element(By.ID, "image-filter")
        for state in check:
            form.find_element(By.CSS_SELECTOR, f'input[name="state"][value="{state}"]').click()
        box = form.find_element(By.NAME, "q")
        if query is not None:
            box.clear()
            box.send_keys(query)
        old = self.browser.find_element(By.ID, "images")
        box.send_keys(Keys.ENTER)
        self.wait_for("the list to load again", lambda: not _attached(old))

    def follow(self, element):
        """Activates a link with the keyboard (focus, Enter) and waits for the next page."""
        old = self.browser.find_element(By.TAG_NAME, "h1")
        element.send_keys(Keys.ENTER)
        self.wait_for("the next page", lambda: not _attached(old))

    def test_search_sort_filter_and_pages_of_a_synced_inventory_then_an_image(self):
        self.log_in()
        answer = self.press()
        self.assertEqual(answer["state"], "started", answer)
        self.wait_for("the run to end as succeeded",
                      lambda: self.text("notice").startswith("sync succeeded"))
        pool = self.pool.name
        # What the pool holds now (another test of the class changes it), in natural
        # order: img-2 before img-10.
        names = sorted(rbd.RBD().list(self.pool.io), key=lambda name: [
            int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)])
        found = [name for name in names if "img-1" in name]
        self.assertEqual(found[:3], ["img-1", "img-10", "img-11"])
        with console_settings(IMAGES_PER_PAGE=8):
            self.log_in()
            # The pool's name is on every row here (every pool is listed).
            self.assertEqual([name for name, _ in self.image_rows()], names[:8])
            self.assertEqual({p for _, p in self.image_rows()}, {pool})

            self.submit_filter("IMG-1")
            self.assertEqual([name for name, _ in self.image_rows()], found[:8])
            self.assertIn("q=IMG-1", self.browser.current_url, "the search is in the URL")
            self.assertEqual(self.text("list-summary"), f"{len(found)} images match")

            # Keyset pages, by rel=next with the keyboard; the search stays.
            self.follow(self.browser.find_element(By.CSS_SELECTOR, 'a[rel="next"]'))
            self.assertEqual([name for name, _ in self.image_rows()], found[8:16])
            self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, 'a[rel="next"]'), [])
            self.follow(self.browser.find_element(By.CSS_SELECTOR, 'a[rel="prev"]'))
            self.assertEqual(self.image_rows()[0][0], "img-1")

            # Sort by used %, fullest first, from its header.
            self.follow(self.browser.find_element(By.LINK_TEXT, "Used %"))
            header = self.browser.find_element(By.XPATH, '//th[a[text()="Used %"]]')
            self.assertEqual(header.get_attribute("aria-sort"), "descending")
            used = self.browser.execute_script(
                "return [...document.querySelectorAll('#images tr.image td.used-percent')]"
                ".map(cell => parseFloat(cell.textContent) || -1);")  # unknown: last
            self.assertEqual(used, sorted(used, reverse=True))
            self.assertGreater(used[0], used[-1], "the images were written unevenly")

            # A filter by state, and the clone's page from its row.
            self.submit_filter("", check=["clone"])
            self.assertEqual(self.image_rows(), [("vm-1", pool)])
            self.screenshot("django-console-filtered.png")
            self.follow(self.browser.find_element(By.LINK_TEXT, "vm-1"))
            self.assertEqual(self.text("image-name"), "vm-1")
            parents = self.browser.execute_script(
                "return [...document.querySelectorAll('#parents li')].map(li => li.textContent);")
            self.assertEqual(parents, [f"{pool}/golden@v1"])
            created = self.browser.find_element(
                By.XPATH, '//dt[text()="Created"]/following-sibling::dd[1]/time')
            self.assertTrue(created.get_attribute("title").endswith(" UTC"))
            self.assertNotEqual(created.text, created.get_attribute("title"),
                                "the script wrote the time in the viewer's zone")
            self.screenshot("django-console-image.png")

            # On a phone's width the page does not scroll sideways: the tables do.
            self.browser.set_window_size(390, 844)
            try:
                self.browser.back()
                self.wait_for("the list again", lambda: self.image_rows() == [("vm-1", pool)])
                self.assertLessEqual(
                    self.browser.execute_script("return document.documentElement.scrollWidth;"),
                    self.browser.execute_script("return window.innerWidth;") + 1)
                self.screenshot("django-console-phone.png")
            finally:
                self.browser.set_window_size(1400, 1300)

    def test_a_run_whose_process_died_is_followed_until_it_is_answered_abandoned(self):
        # A row left `running` (killed, no claim held): the page follows it when it loads,
        # the progress view answers abandoned, and the page stops and says so.
        add_cluster()
        run_id = add_run("running", "cron", phase="reading", done=2, total=9)
        self.log_in()
        # Read in one script: the page may swap the inventory (and #last-run with it) for
        # the answered one at any moment, which would leave a found element stale.
        self.assertEqual(self.browser.execute_script(
            "return document.getElementById('last-run').dataset.runId;"), run_id)
        self.wait_for("the page to say the run was abandoned",
                      lambda: self.text("notice").startswith("sync abandoned: pid 4242 on web-1"))
        self.assertFalse(self.progress_visible(), "the bar is gone: the page stopped following")
