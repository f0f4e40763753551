"""The block-storage page over inventory rows written as rbd-sync writes them."""
import datetime
import json
import re

from django.contrib.auth.models import User
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from .support import (FSID, GIB, MIB, HeldClaim, ViewerTestCase, add_cluster, add_image,
                      add_pool, add_pool_usage, add_run, add_snapshot, add_trash, permission)


class BlockStoragePage(ViewerTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        # 25 GiB stored of 25 + 75: the capacity bar is a quarter full.
        add_pool(1, "rbd", stored=25 * GIB, used=75 * GIB, max_avail=75 * GIB)
        add_pool(2, "vms", stored=0, used=0, max_avail=75 * GIB)
        add_image(1, "golden", "g1", 16 * MIB, used=4 * MIB, snapshot_count=1)
        add_snapshot(1, "g1", 4, "s1", 16 * MIB, protected=True, children=1)
        add_image(2, "vm-1", "c1", 16 * MIB, parent=(1, "rbd", "g1", "golden", 4, "s1"))
        add_image(1, "broken", "b1", 8 * MIB, used=0,
                  stale_error="cannot open: the image header object rbd_header.b1 is missing")
        add_trash(1, "t1", "old-logs")
        cls.t0 = timezone.now() - datetime.timedelta(days=2)
        first = add_run("succeeded", "cron", images=3, started=cls.t0)
        add_pool_usage(1, first, cls.t0, 20 * GIB, 60 * GIB, 80 * GIB, 3, 40 * MIB)
        cls.last = add_run("succeeded", "web", images=3, started=cls.t0 + datetime.timedelta(days=1),
                           history_days=400, requested_by="alice <ops>")
        # The pool's images as the sync wrote them with its latest row: golden and broken.
        add_pool_usage(1, cls.last, cls.t0 + datetime.timedelta(days=1), 25 * GIB, 75 * GIB,
                       75 * GIB, 2, 24 * MIB, images_used=4 * MIB, usage_unknown=0, stale=1)

    def test_page_requires_login(self):
        self.client.logout()
        response = self.client.get(reverse("rbdsync_console:block_storage"))
        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith("/accounts/login/?next=/"), response)

    def test_a_login_without_the_view_permission_sees_nothing(self):
        other = User.objects.create_user("somebody")  # any account of the console's site
        self.client.force_login(other)
        run_id = add_run("running", "web", phase="reading", done=3, total=10)
        for url in (reverse("rbdsync_console:block_storage"), reverse("rbdsync_console:inventory"),
                    reverse("rbdsync_console:run_progress", args=[run_id])):
            response = self.client.get(url)
            self.assertEqual(response.status_code, 403, url)
            self.assertNotIn(b"golden", response.content)
            self.assertNotIn(b"reading", response.content)

    def test_pools_have_capacity_bars_and_figures(self):
        response = self.page()
        cards = {card["pool"].name: card for card in response.context["pool_cards"]}
        self.assertEqual(set(cards), {"rbd", "vms"})
        self.assertAlmostEqual(cards["rbd"]["pool"].stored_percent, 25.0)
        # From the pool's latest history row, not from the images: no page load
        # aggregates them.
        self.assertEqual(cards["rbd"]["stats"].images, 2)
        self.assertEqual(cards["rbd"]["stats"].stale_images, 1)
        self.assertIsNone(cards["vms"]["stats"], "no history row yet")
        html = response.content.decode()
        rbd = re.search(r'<article class="pool" data-pool-id="1".*?</article>', html, re.S).group(0)
        self.assertIn('style="width: 25.0%"', rbd)
        self.assertIn("25 GiB stored", rbd)
        self.assertIn("75 GiB raw used", rbd)
        self.assertIn("75 GiB available", rbd)
        self.assertIn("24 MiB provisioned", rbd)
        self.assertIn("4 MiB used by images", rbd)
        self.assertIn(f'href="?pool={FSID}:1&amp;state=stale">1 stale</a>', rbd)

    def test_each_pool_chart_holds_its_history_until_the_last_committed_run(self):
        html = self.page().content.decode()
        rbd = re.search(r'<article class="pool" data-pool-id="1".*?</article>', html, re.S).group(0)
        data = json.loads(re.search(r'<script id="usage-\d+" type="application/json">(.*?)</script>',
                                    rbd, re.S).group(1))
        self.assertEqual(data["pool"], "rbd")
        self.assertEqual([p["stored"] for p in data["points"]], [20 * GIB, 25 * GIB, 25 * GIB])
        self.assertEqual(data["points"][0]["t"], int(self.t0.timestamp() * 1000))
        # The last point is the end of the last committed run: the figures held until then.
        self.assertGreater(data["points"][2]["t"], data["points"][1]["t"])
        vms = re.search(r'<article class="pool" data-pool-id="2".*?</article>', html, re.S).group(0)
        self.assertIn('"points": []', vms)

    def test_each_chart_says_the_span_it_holds_and_how_long_history_is_kept(self):
        html = self.page().content.decode()
        rbd = re.search(r'<article class="pool" data-pool-id="1".*?</article>', html, re.S).group(0)
        since = self.t0.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d")
        self.assertRegex(rbd, rf'Usage since <time datetime="{since}T[^"]+">{since}</time>; '
                              r'rbd-sync keeps 400 days\.')
        vms = re.search(r'<article class="pool" data-pool-id="2".*?</article>', html, re.S).group(0)
        self.assertIn("No usage recorded yet; rbd-sync keeps 400 days.", vms)
        # What the last committed run applied, not an earlier one's.
        add_run("succeeded", "cron", images=3, history_days=0,
                started=self.t0 + datetime.timedelta(days=1, hours=1))
        self.assertIn("rbd-sync keeps all history.", self.page().content.decode())

    def test_every_cluster_of_the_database_is_shown_by_name(self):
        other = "7f3c7e0e-0000-4000-8000-000000000002"
        add_cluster(other, name="backup")
        add_pool(9, "dr", stored=GIB, used=GIB, max_avail=GIB, fsid=other)
        html = self.page().content.decode()
        dr = re.search(r'<article class="pool" data-pool-id="9".*?</article>', html, re.S).group(0)
        self.assertIn('<span class="cluster">backup</span>', dr)
        rbd = re.search(r'<article class="pool" data-pool-id="1".*?</article>', html, re.S).group(0)
        self.assertIn('<span class="cluster">', rbd)

    def test_images_have_usage_bars_parents_and_the_stale_mark(self):
        html = self.page().content.decode()
        rows = {m.group(1): m.group(0) for m in
                re.finditer(r'<tr class="image[^"]*" data-name="([^"]+)".*?</tr>', html, re.S)}
        self.assertEqual(list(rows), ["broken", "golden", "vm-1"], "in natural order of names")
        self.assertIn('style="width: 25.0%"', rows["golden"])  # 4 of 16 MiB
        self.assertIn('<td class="snapshots number">1</td>', rows["golden"])
        self.assertIn('<td class="pool-name">vms</td>', rows["vm-1"])
        self.assertIn('<td class="parent">rbd/golden@s1</td>', rows["vm-1"])
        self.assertIn("usage unknown: fast-diff disabled", rows["vm-1"])
        self.assertIn('class="image stale"', rows["broken"])
        self.assertIn("rbd_header.b1 is missing", rows["broken"])
        self.assertIn(f'<a class="image-link" href="/image/?cluster={FSID}&amp;pool=1&amp;'
                      'namespace=&amp;id=g1">golden</a>', rows["golden"])
        # The stale images are a filter of the list, not a list of their own.
        self.assertIn('<a class="stale-link" href="?state=stale">1 stale</a>', html)

    def test_trash_last_run_and_run_history(self):
        html = self.page().content.decode()
        self.assertIn('data-name="old-logs"', re.search(r'<table id="trash">.*?</table>', html,
                                                        re.S).group(0))
        self.assertRegex(html, r'<p id="last-run" data-status="succeeded" data-run-id="'
                               + self.last + r'">\s*Last sync: succeeded '
                               r'\(by web \(alice &lt;ops&gt;\)\)')
        runs = re.findall(r'<tr class="run (\w+)" data-run-id="([^"]+)"', html)
        by = re.findall(r'<tr class="run \w+" data-run-id="[^"]+" data-status="\w+">\s*'
                        r'<td><time [^>]*>[^<]*</time></td><td>([^<]*)</td>', html)
        self.assertEqual(by, ["web (alice &lt;ops&gt;)", "cron"], "who asked, escaped")
        self.assertEqual(len(runs), 2)
        self.assertEqual(runs[0], ("succeeded", self.last), "newest first")

    def test_pool_filter_lists_that_pools_images_only(self):
        for query in ({"pool": "2"}, {"pool": f"{FSID}:2"}, {"pool": "2", "cluster": FSID}):
            with self.subTest(query=query):
                response = self.page(**query)
                self.assertEqual([row["image"].name for row in response.context["image_rows"]],
                                 ["vm-1"])
                self.assertEqual(len(response.context["pool_cards"]), 2, "every card stays")
                self.assertNotIn('<td class="pool-name">', response.content.decode(),
                                 "one pool: its name is not repeated on every row")

    def test_the_refreshable_part_is_the_inventory_without_the_page(self):
        response = self.client.get(reverse("rbdsync_console:inventory"))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'id="last-run"')
        self.assertContains(response, 'data-name="golden"')
        self.assertNotContains(response, "<html")
        self.assertNotContains(response, 'id="sync-now"')

    def test_the_button_is_only_for_users_who_may_sync(self):
        self.assertNotContains(self.page(), 'id="sync-now"')
        self.user.user_permissions.add(*permission("sync_now"))
        self.assertContains(self.page(), 'id="sync-now"')


class RunProgress(TestCase):
    def setUp(self):
        viewer = User.objects.create_user("viewer")
        viewer.user_permissions.add(*permission("view_inventory"))
        self.client.force_login(viewer)

    def progress(self, run_id):
        return self.client.get(reverse("rbdsync_console:run_progress", args=[run_id]))

    def test_a_running_run_shows_its_phase_and_counts(self):
        run_id = add_run("running", "web", phase="reading", done=3, total=10)
        claim = HeldClaim()
        self.addCleanup(claim.release)
        answer = self.progress(run_id).json()
        self.assertEqual((answer["status"], answer["phase"], answer["done"], answer["total"]),
                         ("running", "reading", 3, 10))
        self.assertNotIn("message", answer)

    def test_a_running_row_whose_claim_nobody_holds_is_answered_abandoned(self):
        # Its process was killed: the row stays `running` until the cluster's next sync,
        # but the page must stop following it now.
        run_id = add_run("running", "web", phase="reading", done=3, total=10)
        answer = self.progress(run_id).json()
        self.assertEqual((answer["status"], answer["done"], answer["total"]),
                         ("abandoned", 3, 10))
        self.assertEqual(answer["message"], "sync abandoned: pid 4242 on web-1 ended without "
                                            "recording how (killed?); the next sync records it")
        other_cluster = HeldClaim("0bbd9a41-0000-4000-8000-000000000002")
        self.addCleanup(other_cluster.release)
        self.assertEqual(self.progress(run_id).json()["status"], "abandoned",
                         "another cluster's claim is not this run's")

    def test_an_ended_run_says_how(self):
        answer = self.progress(add_run("succeeded", "web", images=9)).json()
        self.assertEqual(answer["message"], "sync succeeded: 9 images, 9 added, 0 changed, "
                                            "0 removed")
        failed = self.progress(add_run("failed", "cron", error="pool gone")).json()
        self.assertEqual(failed["message"], "sync failed: pool gone")

    def test_an_unknown_run_is_not_found(self):
        self.assertEqual(self.progress("6f1c0a5e-0000-4000-8000-000000000000").status_code, 404)
