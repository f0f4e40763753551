"""The image list at scale: natural order, names of any bytes, filters, keyset pages and
the URL that holds all of it, over rows written as rbd-sync writes them."""
import base64
import html
import json
import re
from urllib.parse import parse_qs, urlsplit

from django.contrib.auth.models import User
from django.db import connections
from django.http import QueryDict
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from .. import conf
from ..image_list import SORTS, STATES, ListState, encode_cursor, page_queryset
from .support import (FSID, MIB, ViewerTestCase, add_cluster, add_image, add_pool,
                      add_pool_usage, add_run, add_snapshot, execute)

OTHER = "7f3c7e0e-0000-4000-8000-000000000002"


def names(response):
    return [row["image"].name for row in response.context["image_rows"]]


def link(response, rel):
    """The query of the page's rel=next / rel=prev link, or None."""
    found = re.search(rf'<a rel="{rel}" href="\?([^"]*)"', response.content.decode())
    return html.unescape(found.group(1)) if found else None


class ImageList(ViewerTestCase):
    POOLS = ((1, "rbd"), (2, "vms"))

    def test_names_sort_in_natural_order(self):
        for index, name in enumerate(["vol-10", "vol-9", "vol-2", "vol-1", "Vol-3", "vol-100",
                                      "a10b2", "a9b10", "a10b10"]):
            add_image(1, name, f"i{index}", MIB)
        expected = ["a9b10", "a10b2", "a10b10", "vol-1", "vol-2", "Vol-3", "vol-9", "vol-10",
                    "vol-100"]
        self.assertEqual(names(self.page()), expected)
        self.assertEqual(names(self.page(dir="desc")), expected[::-1])

    def test_search_is_case_insensitive_any_text_and_takes_wildcards_literally(self):
        # What rbd-sync stores of a name whose bytes are not UTF-8: display text with
        # \xHH escapes, and the bytes themselves (docs/schema.md, "Names of any bytes").
        execute("INSERT INTO rbdsync.images (fsid, pool_id, image_id, name, name_bytes, format, "
                "size_bytes, object_size, features, feature_names, used_unknown_reason) VALUES (%s, 1, "
                "'raw', %s, %s, 2, 1, 4194304, 1, '{}', 'fast-diff disabled')", (FSID, "db\\xff-<b>", b"db\xff-<b>"))
        add_image(1, "ÄRGER-logs", "u1", MIB)
        add_image(1, "100%_full", "p1", MIB)
        add_image(1, "100-full", "p2", MIB)
        add_image(1, "plain", "x1", MIB)
        self.assertEqual(names(self.page(q="ärg")), ["ÄRGER-logs"], "Unicode case folding")
        self.assertEqual(names(self.page(q="LOGS")), ["ÄRGER-logs"])
        self.assertEqual(names(self.page(q="%")), ["100%_full"], "% is a character here")
        self.assertEqual(names(self.page(q="_full")), ["100%_full"], "_ is a character here")
        response = self.page(q="\\xFF")
        self.assertEqual(names(response), ["db\\xff-<b>"], "the escape as stored, any case")
        self.assertIn('data-name="db\\xff-&lt;b&gt;"', response.content.decode(), "escaped")
        self.assertEqual(names(self.page(q="nothing like it")), [])
        self.assertContains(self.page(q="nothing like it"), "No image matches.")

    def test_each_state_filter_selects_its_images(self):
        add_image(1, "plain", "p", MIB, used=0)
        add_image(1, "stale", "s", MIB, used=0, stale_error="cannot open")
        add_image(1, "unknown", "u", MIB)
        add_image(1, "snapped", "n", MIB, used=0, snapshot_count=2)
        add_image(1, "clone", "c", MIB, used=0, parent=(1, "rbd", "n", "snapped", 4, "s1"))
        add_image(1, "mirrored", "m", MIB, used=0, mirror_mode="snapshot",
                  mirror_state="enabled", mirror_primary=True)
        add_image(1, "grouped", "g", MIB, used=0, group_pool_id=1, group_name="db")
        add_image(1, "locked", "l", MIB, used=0, lock_type="exclusive",
                  lockers='[{"locker": "client.7", "id": "auto 1", "address": "10.0.0.1:0/1"}]')
        add_image(1, "watched", "w", MIB, used=0,
                  watchers='[{"address": "10.0.0.5:0/3", "client": 4247, "cookie": 1}]')
        expected = {"stale": ["stale"], "usage_unknown": ["unknown"], "snapshots": ["snapped"],
                    "clone": ["clone"], "mirrored": ["mirrored"], "group": ["grouped"],
                    "locked": ["locked"], "in_use": ["watched"]}
        self.assertEqual(set(expected), set(STATES))
        for state, wanted in expected.items():
            with self.subTest(state=state):
                self.assertEqual(names(self.page(state=state)), wanted)
        self.assertEqual(names(self.page(state=["stale", "in_use"])), [], "states combine")
        rows = self.page().content.decode()
        self.assertIn('<td class="mirroring">snapshot, enabled, primary</td>', rows)
        self.assertIn('<td class="group">db</td>', rows)
        self.assertIn('<td class="lock-owner">client.7 (exclusive)</td>', rows)
        self.assertIn('<span class="watcher">10.0.0.5:0/3</span>', rows)

    def test_cluster_pool_and_namespace_filters(self):
        add_cluster(OTHER, name="backup")
        add_pool(1, "dr", fsid=OTHER)
        add_image(1, "here", "h", MIB)
        add_image(1, "tenant", "t", MIB, namespace="tenant-a")
        add_image(2, "elsewhere", "e", MIB)
        add_image(1, "there", "h", MIB, fsid=OTHER)
        self.assertEqual(names(self.page(cluster=OTHER)), ["there"])
        self.assertEqual(names(self.page(pool=f"{FSID}:1")), ["here", "tenant"])
        response = self.page(pool="1")
        self.assertEqual(names(response), ["here", "tenant", "there"],
                         "a pool id alone means that id in every cluster")
        content = response.content.decode()
        self.assertIn('<td class="pool-name">dr</td>', content, "two pools: named on rows")
        self.assertIn(f'<option value="{FSID}:1" selected>', content,
                      "the form keeps the filter when it is sent again")
        self.assertEqual(names(self.page(pool="1", namespace="=")), ["here", "there"],
                         "the default namespace")
        self.assertEqual(names(self.page(namespace="=tenant-a")), ["tenant"])
        response = self.page(namespace="tenant-a", pool="x", state="bogus")
        self.assertEqual(names(response), ["elsewhere", "here", "tenant", "there"],
                         "what the URL gets wrong is dropped")
        self.assertEqual(response.context["list"].problems,
                         ("pool: not a pool id", "namespace: expected =NAME",
                          "state: unknown bogus"))
        self.assertContains(response, '<ul class="problems" role="alert">')

    @override_settings(RBDSYNC_CONSOLE={"IMAGES_PER_PAGE": 4})
    def test_keyset_pages_cross_equal_sort_keys_once_each_both_ways(self):
        # 11 images of one size in two pools and two clusters: the sort key ties
        # everywhere, and only the primary key orders them.
        add_cluster(OTHER, name="backup")
        add_pool(1, "dr", fsid=OTHER)
        add_pool(2, "dr2", fsid=OTHER)
        for index in range(11):
            add_image(1 + index % 2, f"same-{index}", f"id{index:02}", 8 * MIB,
                      fsid=OTHER if index % 3 == 0 else FSID)
        for sort in SORTS:
            with self.subTest(sort=sort):
                pages, query = [], f"sort={sort}&q=same"
                while query is not None:
                    response = self.client.get("/?" + query)
                    pages.append(names(response))
                    query = link(response, "next")
                self.assertEqual([len(page) for page in pages], [4, 4, 3])
                seen = [name for page in pages for name in page]
                self.assertEqual(sorted(seen), sorted(f"same-{i}" for i in range(11)))
                self.assertEqual(response.context["list"].page, 3)
                # And back from the last page, by the rel=prev links.
                back = []
                query = link(response, "prev")
                while query is not None:
                    response = self.client.get("/?" + query)
                    back.insert(0, names(response))
                    query = link(response, "prev")
                self.assertEqual(back, pages[:2])
                self.assertEqual(response.context["list"].page, 1)

    @override_settings(RBDSYNC_CONSOLE={"IMAGES_PER_PAGE": 2})
    def test_sorts_by_each_column_with_unknown_values_last_when_descending(self):
        add_image(1, "small", "a", MIB, used=MIB, snapshot_count=1,
                  create_timestamp="2026-01-01T00:00:00Z")
        add_image(1, "big-full", "b", 100 * MIB, used=90 * MIB + 1, snapshot_count=0,
                  create_timestamp="2026-03-01T00:00:00Z")
        add_image(1, "big-empty", "c", 100 * MIB, used=10 * MIB, snapshot_count=3,
                  create_timestamp="2026-02-01T00:00:00.123456Z")
        add_image(1, "unknown", "d", 50 * MIB, snapshot_count=None)
        # Cursors hold values, not the session's text of them: with floats written to 12
        # digits, a cursor of 0.9000000095367432 would otherwise skip or repeat rows.
        execute("SET LOCAL extra_float_digits = -3")
        expected = {"size": ["big-empty", "big-full", "unknown", "small"],
                    "used": ["big-full", "big-empty", "small", "unknown"],
                    "used_pct": ["small", "big-full", "big-empty", "unknown"],
                    "snapshots": ["big-empty", "small", "big-full", "unknown"],
                    "created": ["big-full", "big-empty", "small", "unknown"]}
        for sort, wanted in expected.items():
            with self.subTest(sort=sort):
                first = self.page(sort=sort)
                second = self.client.get("/?" + link(first, "next"))
                self.assertEqual(names(first) + names(second), wanted, "descending first")
                self.assertIsNone(link(second, "next"))
                ascending = names(self.page(sort=sort, dir="asc")) + names(
                    self.client.get("/?" + link(self.page(sort=sort, dir="asc"), "next")))
                self.assertEqual(ascending, wanted[::-1])

    def test_sortable_headers_say_how_the_list_is_sorted(self):
        content = self.page(sort="used").content.decode()
        headers = {label: (aria, html.unescape(query)) for aria, query, label in re.findall(
            r'<th scope="col"[^>]*?(?: aria-sort="(\w+)")?><a href="\?([^"]*)">([^<]+)</a>',
            content)}
        self.assertEqual(set(headers), {sort.label for sort in SORTS.values()})
        self.assertEqual(headers["Used"], ("descending", "sort=used&dir=asc"),
                         "sorted by used, biggest first; a click turns it round")
        self.assertEqual(headers["Name"], ("", ""), "not sorted by name; a click sorts by it")
        self.assertEqual(headers["Size"], ("", "sort=size"), "numbers: biggest first")
        self.assertEqual(content.count("aria-sort="), 1)

    def test_a_cursor_from_another_sort_or_forged_starts_at_the_first_page(self):
        add_image(1, "a", "a", MIB)
        key = [FSID, 1, "", "a"]
        forged = {
            "garbage": ("size", "garbage"),
            "another sort's": ("size", encode_cursor("name", ["a"], key)),
            "text for a number": ("size", encode_cursor("size", ["1; DROP"], key)),
            "beyond bigint": ("size", encode_cursor("size", [2 ** 63], key)),
            "beyond integer": ("snapshots", encode_cursor("snapshots", [2 ** 31], key)),
            "a NUL in a name": ("name", encode_cursor("name", ["a\x00"], key)),
            "a NUL in an id": ("name", encode_cursor("name", ["a"], [FSID, 1, "", "a\x00"])),
            "a number for the fsid": ("name", encode_cursor("name", ["a"], [7, 1, "", "a"])),
            "true for the pool": ("name", encode_cursor("name", ["a"], [FSID, True, "", "a"])),
            "a float for bytes": ("used_pct", encode_cursor("used_pct", [0.5, 1], key)),
            "one value for two": ("used_pct", encode_cursor("used_pct", [1], key)),
            "a time without zone": ("created", encode_cursor("created", ["2026-01-01T00:00"],
                                                             key)),
            "nested deep": ("name", base64.urlsafe_b64encode(b"[" * 100000).decode()),
        }
        for what, (sort, cursor) in forged.items():
            with self.subTest(what=what):
                response = self.page(sort=sort, after=cursor)
                self.assertEqual(names(response), ["a"])
                self.assertIn("the page link is out of date: showing the first page",
                              response.context["list"].problems)

    def test_a_nul_anywhere_in_the_url_is_refused_not_an_error(self):
        add_image(1, "a", "a", MIB)
        response = self.page(q="a\x00")
        self.assertEqual(names(response), ["a"])
        self.assertIn("q: no name holds a NUL (rbd-sync stores it as \\x00)",
                      response.context["list"].problems)
        response = self.page(namespace="=\x00")
        self.assertEqual(names(response), ["a"])
        self.assertIn("namespace: expected =NAME", response.context["list"].problems)
        self.assertIn("pool: not a pool id", self.page(pool=str(2 ** 63)).context["list"].problems)
        for query in ({"id": "a\x00"}, {"id": "a", "namespace": "\x00"}, {"pool": 2 ** 63}):
            with self.subTest(query=query):
                response = self.client.get(reverse("rbdsync_console:image"),
                                           {"cluster": FSID, "pool": 1, "id": "a", **query})
                self.assertEqual(response.status_code, 404)

    def test_the_unfiltered_count_is_the_pools_figures_a_filtered_one_counted(self):
        add_image(1, "a", "a", MIB)
        add_image(2, "b", "b", MIB)
        run = add_run("succeeded", images=2)
        add_pool_usage(1, run, timezone.now(), 0, 0, 0, 1, MIB)
        # No row for pool 2 yet (a pool the last runs did not read): counted.
        self.assertContains(self.page(), '<span class="matching">2</span> images</p>', html=False)
        # The sync's figures, once every pool has them: here deliberately not the rows'.
        add_pool_usage(2, run, timezone.now(), 0, 0, 0, 41, MIB)
        self.assertContains(self.page(), '<span class="matching">42</span> images</p>')
        self.assertContains(self.page(q="a"), '<span class="matching">1</span> image match')

    def test_a_page_past_the_end_links_back_to_the_first(self):
        add_image(1, "a", "a", MIB)
        # After a row that sorts last (removed since the link was made).
        response = self.page(after=encode_cursor("name", ["zzz"], [FSID, 9, "", "z"]), page=5)
        self.assertEqual(names(response), [])
        self.assertEqual(link(response, "prev"), "")
        self.assertIsNone(link(response, "next"))

    def test_the_url_holds_the_whole_view(self):
        state = ListState(q="vol 1", cluster=FSID, pool=1, namespace="", sort="used_pct",
                          descending=False, states=("stale", "locked"),
                          after=encode_cursor("used_pct", [5, 10], [FSID, 1, "", "x"]), page=7)
        query = state.query(after=state.after, page=7)
        self.assertEqual(ListState.from_query(QueryDict(query)), state)
        self.assertEqual(parse_qs(query)["namespace"], ["="])
        # A change of what is listed, or of its order, starts again at the first page.
        moved = ListState.from_query(QueryDict(state.query(q="other")))
        self.assertEqual((moved.after, moved.page, moved.sort), (None, 1, "used_pct"))
        # The page's own links keep the filters, and the form shows them.
        add_image(1, "vol 1", "v", MIB, stale_error="cannot open",
                  lockers='[{"locker": "client.7", "id": "a", "address": "b"}]')
        response = self.client.get("/?" + state.query())
        self.assertEqual(names(response), ["vol 1"])
        content = response.content.decode()
        self.assertIn('<input type="search" name="q" value="vol 1"', content)
        self.assertIn('<input type="checkbox" name="state" value="locked" checked>', content)
        self.assertIn(f'<option value="{FSID}:1" selected>rbd</option>', content)
        self.assertIn('<option value="=" selected>(default)</option>', content)
        sorted_link = re.search(r'<a href="\?([^"]*)">Size</a>', content).group(1)
        self.assertEqual(ListState.from_query(QueryDict(html.unescape(sorted_link))),
                         ListState(q="vol 1", cluster=FSID, pool=1, namespace="",
                                   states=("stale", "locked"), sort="size", descending=True))

    def test_the_name_order_walks_its_index_from_a_cursor(self):
        """The name's sort expression must be its index's own (sql/011), or every page
        sorts the whole table. With scans and sorts priced out, the plan shows the index
        when the query can use it; a mismatch leaves a Sort node, whatever its price."""
        add_image(1, "a", "a", MIB)
        add_image(1, "b", "b", MIB)
        with connections[conf.get("DATABASE")].cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; "
                           "SET LOCAL enable_bitmapscan = off")
        for descending, direction in ((False, "after"), (True, "after"), (False, "before")):
            first = ListState(descending=descending)
            fsid, pool_id, namespace, image_id, name = page_queryset(first, 1)[0]
            token = encode_cursor("name", [name], [str(fsid), pool_id, namespace, image_id])
            state = ListState.from_query(QueryDict(first.query(**{direction: token})))
            with self.subTest(descending=descending, cursor=direction):
                plan = page_queryset(state, 100).explain()
                backward = descending != (direction == "before")
                self.assertRegex(plan, f"Index (Only )?Scan {'Backward ' if backward else ''}"
                                       "using images_by_natural_name")
                self.assertIn("Index Cond", plan, "the cursor is a condition of the scan")
                self.assertNotRegex(plan, r"(?m)^\s*(->\s*)?(Incremental )?Sort\b")
        # The stale images have a partial index of their own, in the same order.
        plan = page_queryset(ListState(states=("stale",)), 100).explain()
        self.assertRegex(plan, "Index (Only )?Scan using images_stale")
        self.assertNotRegex(plan, r"(?m)^\s*(->\s*)?(Incremental )?Sort\b")


class ImagePage(ViewerTestCase):
    POOLS = ((1, "rbd"), (2, "vms"), (3, "ec-data"))

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        add_image(1, "base", "b", 10 * MIB, used=MIB, snapshot_count=1)
        add_snapshot(1, "b", 1, "gold", 10 * MIB, protected=True, children=1)
        execute("UPDATE rbdsync.snapshots SET used_bytes = %s, used_unknown_reason = NULL "
                "WHERE image_id = 'b'", (3 * MIB,))
        add_image(1, "golden", "g", 10 * MIB, used=MIB, snapshot_count=1,
                  parent=(1, "rbd", "b", "base", 1, "gold"))
        add_snapshot(1, "g", 4, "s1", 10 * MIB, protected=True, children=2)
        add_image(2, "vm-1", "c1", 10 * MIB, parent=(1, "rbd", "g", "golden", 4, "s1"),
                  data_pool_id=3, config_overrides=json.dumps({"rbd_qos_iops_limit": "100",
                                                               "rbd_cache": "false"}),
                  create_timestamp="2026-05-04T03:02:01Z")
        add_image(2, "vm-2", "c2", 10 * MIB, parent=(1, "rbd", "g", "golden", 4, "s1"))

    def image(self, pool, image_id, namespace=""):
        return self.client.get(reverse("rbdsync_console:image"),
                               {"cluster": FSID, "pool": pool, "namespace": namespace,
                                "id": image_id})

    def test_an_image_page_shows_every_field_its_parents_and_clones(self):
        response = self.image(2, "c1")
        self.assertEqual(response.status_code, 200)
        content = response.content.decode()
        self.assertIn('<h1 id="image-name">vm-1</h1>', content)
        fields = dict(re.findall(r"<dt>([^<]+)</dt><dd>(.*?)</dd>", content, re.S))
        self.assertIn("ec-data", fields["Data pool"])
        self.assertEqual(re.sub(r"<[^>]+>", "", fields["QoS"]), "rbd_qos_iops_limit = 100")
        self.assertEqual(fields["Other overrides"], "rbd_cache = false")
        self.assertIn('datetime="2026-05-04T03:02:01+00:00" title="2026-05-04 03:02:01 UTC"',
                      fields["Created"])
        self.assertIn("2026-05-04 03:02:01 UTC", fields["Created"], "UTC without JavaScript")
        chain = re.findall(r'<li class="parent"><a class="image-link" href="([^"]+)">([^<]+)</a>',
                           content)
        self.assertEqual([text for _, text in chain], ["rbd/golden@s1", "rbd/base@gold"])
        self.assertEqual(self.client.get(html.unescape(chain[1][0])).context["image"].name,
                         "base", "each parent links to its own page")

    def test_snapshots_with_their_usage_and_clones_of_the_image(self):
        content = self.image(1, "g").content.decode()
        clones = re.findall(r'<li class="clone"><a class="image-link" href="[^"]+">([^<]+)</a>',
                            content)
        self.assertEqual(clones, ["vms/vm-1", "vms/vm-2"])
        base = self.image(1, "b").content.decode()
        snapshot = re.search(r'<tr class="snapshot" data-name="gold">.*?</tr>', base, re.S).group(0)
        self.assertIn('<td class="number snapshot-used">3 MiB</td>', snapshot)
        self.assertIn("Not a clone.", base)

    def test_an_unknown_or_misnamed_image_is_not_found(self):
        self.assertEqual(self.image(1, "nope").status_code, 404)
        self.assertEqual(self.image(1, "g", namespace="other").status_code, 404)
        self.assertEqual(self.client.get(reverse("rbdsync_console:image"),
                                         {"cluster": "x", "pool": 1, "id": "g"}).status_code, 404)

    def test_the_image_page_needs_the_view_permission(self):
        self.client.force_login(User.objects.create_user("somebody"))
        response = self.image(1, "g")
        self.assertEqual(response.status_code, 403)
        self.assertNotIn(b"golden", response.content)

    def test_links_from_the_list_open_the_image_page(self):
        listing = self.client.get("/?q=vm-1").content.decode()
        href = html.unescape(re.search(r'<a class="image-link" href="([^"]+)">vm-1</a>',
                                       listing).group(1))
        self.assertEqual(urlsplit(href).path, reverse("rbdsync_console:image"))
        self.assertEqual(self.client.get(href).context["image"].image_id, "c1")
