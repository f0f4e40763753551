"""The image list: search, filters, sort and keyset paging, all in the URL.

Every page starts from a cursor (the last row's sort key and primary key), so page 1,000
costs what page 1 does: no OFFSET, which reads and throws away every row before the
page. The default order, by name, walks the btree of sql/011_console_at_scale.sql,
whose expression the one below spells alike, or the planner could not use it; the
other sorts read the table and keep the top (011 says why they have no index).

The state of the list is its URL's query (ListState): a link shows the same view, and
the page works as plain links and a GET form without JavaScript.
"""
import base64
import binascii
import dataclasses
import datetime
import json
import uuid

from django.db.models import BooleanField, F, Q
from django.db.models.expressions import OrderBy, RawSQL
from django.http import QueryDict

from .models import Image

IMAGES = '"rbdsync"."console_images"'
NATURAL = '"rbdsync"."natural_sort"'


def is_text(value):
    return isinstance(value, str) and "\x00" not in value  # PostgreSQL text holds no NUL


def _integer(bits):
    low, high = -2 ** (bits - 1), 2 ** (bits - 1) - 1
    return lambda value: type(value) is int and low <= value <= high  # not bool


is_bigint = _integer(64)


def _time(value):
    try:
        return is_text(value) and datetime.datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _or_null(valid):
    return lambda value: value is None or valid(value)


@dataclasses.dataclass(frozen=True)
class Sort:
    """One order of the list. A cursor holds the sorted row's `columns` as they are
    stored, and the database computes the sort key from them again with `cast`, exactly
    as `expression` does for the rows: no value goes through text in between (a float's
    text depends on the session's extra_float_digits)."""
    label: str
    expression: str  # over the view's columns (for name: as its index spells it)
    columns: tuple   # what a cursor holds of the row
    cast: str        # `expression` over a cursor's values (%s, one per column)
    valid: tuple     # per column, which JSON values a cursor may hold: forged ones are refused
    descending_first: bool


_BIGINT = _or_null(is_bigint)
SORTS = {
    "name": Sort("Name", f'({IMAGES}."name" COLLATE {NATURAL})', ("name",),
                 f"(%s::text COLLATE {NATURAL})", (is_text,), False),
    "size": Sort("Size", f'COALESCE({IMAGES}."size_bytes", -1)', ("size_bytes",),
                 "COALESCE(%s::bigint, -1)", (_BIGINT,), True),
    "used": Sort("Used", f'COALESCE({IMAGES}."used_bytes", -1)', ("used_bytes",),
                 "COALESCE(%s::bigint, -1)", (_BIGINT,), True),
    "used_pct": Sort("Used %", f'COALESCE(({IMAGES}."used_bytes")::float8 / '
                               f'NULLIF({IMAGES}."size_bytes", 0), -1)',
                     ("used_bytes", "size_bytes"),
                     "COALESCE((%s::bigint)::float8 / NULLIF(%s::bigint, 0), -1)",
                     (_BIGINT, _BIGINT), True),
    "snapshots": Sort("Snapshots", f'COALESCE({IMAGES}."snapshot_count", -1)',
                      ("snapshot_count",), "COALESCE(%s::integer, -1)",
                      (_or_null(_integer(32)),), True),
    "created": Sort("Created", f"COALESCE({IMAGES}.\"create_timestamp\", "
                               "'-infinity'::timestamptz)", ("create_timestamp",),
                    "COALESCE(%s::timestamptz, '-infinity'::timestamptz)", (_or_null(_time),),
                    True),
}


def cursor_value(value):
    """A stored value as a cursor holds it, in JSON: a time in ISO 8601 with its offset."""
    return value.isoformat() if isinstance(value, datetime.datetime) else value


# The filters by state: each a condition on the view's columns.
STATES = {
    "stale": ("Stale", Q(stale_error__isnull=False)),
    "usage_unknown": ("Usage unknown", Q(used_bytes__isnull=True)),
    "snapshots": ("Has snapshots", Q(snapshot_count__gt=0)),
    "clone": ("Is a clone", Q(parent_image_id__isnull=False)),
    "mirrored": ("Mirrored", Q(mirror_mode__isnull=False)),
    "group": ("In a group", Q(group_pool_id__isnull=False)),
    "locked": ("Locked", RawSQL(f"{IMAGES}.\"lockers\" <> '[]'::jsonb", (),
                                output_field=BooleanField())),
    "in_use": ("In use (watchers)", RawSQL(f"{IMAGES}.\"watchers\" <> '[]'::jsonb", (),
                                           output_field=BooleanField())),
}

KEY = ("fsid", "pool_id", "namespace", "image_id")
KEY_COLUMNS = ", ".join(f'{IMAGES}."{column}"' for column in KEY)


class BadCursor(ValueError):
    pass


def encode_cursor(sort, values, key):
    """The position after (or before) a row: the sort's name, the row's values of the
    sort's columns and its primary key, as URL-safe base64 of JSON (names may be any
    text)."""
    text = json.dumps([sort, [cursor_value(value) for value in values], *key],
                      ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(sort, token):
    """(values of the sort's columns, [fsid, pool id, namespace, image id]) of a cursor
    made for `sort`. Whatever the URL holds, a value the database would refuse never
    reaches it."""
    try:
        name, values, fsid, pool_id, namespace, image_id = json.loads(
            base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        fsid = str(uuid.UUID(fsid)) if isinstance(fsid, str) else None
    except (ValueError, TypeError, binascii.Error, RecursionError) as error:
        raise BadCursor(token) from error
    valid = SORTS[sort].valid
    if (name != sort or fsid is None or not is_bigint(pool_id) or not is_text(namespace)
            or not is_text(image_id) or not isinstance(values, list) or len(values) != len(valid)
            or not all(check(value) for check, value in zip(valid, values))):
        raise BadCursor(token)
    return values, [fsid, pool_id, namespace, image_id]


@dataclasses.dataclass(frozen=True)
class ListState:
    """What the list shows, as its URL says it. Values the URL gets wrong are dropped
    (a stale bookmark still opens), and `problems` says which."""
    q: str = ""
    cluster: str = None      # fsid
    pool: int = None         # pool id (with cluster, when several clusters share an id)
    namespace: str = None    # None: any; "": the pool's default namespace
    states: tuple = ()
    sort: str = "name"
    descending: bool = False
    after: str = None        # cursor tokens: the page after / before that row
    before: str = None
    page: int = 1            # for the reader only: keyset pages have no number of their own
    problems: tuple = ()

    @classmethod
    def from_query(cls, query):
        problems = []
        q = query.get("q", "")
        if "\x00" in q:
            problems.append("q: no name holds a NUL (rbd-sync stores it as \\x00)")
            q = ""
        cluster = query.get("cluster") or None
        if cluster is not None:
            try:
                cluster = str(uuid.UUID(cluster))
            except ValueError:
                problems.append("cluster: not a cluster fsid")
                cluster = None
        # "ID", or "FSID:ID" (the form's choice of one cluster's pool).
        pool = query.get("pool") or None
        if pool is not None:
            try:
                fsid, _, pool_id = pool.rpartition(":")
                pool = int(pool_id)
                cluster = str(uuid.UUID(fsid)) if fsid else cluster
                if not is_bigint(pool):
                    raise ValueError(pool)
            except ValueError:
                problems.append("pool: not a pool id")
                pool = None
        # "=NAME": namespace NAME; "=": the default namespace. The prefix keeps "any"
        # (absent or empty) apart from the default namespace, whose name is empty.
        namespace = query.get("namespace") or None
        if namespace is not None:
            if namespace.startswith("=") and is_text(namespace):
                namespace = namespace[1:]
            else:
                problems.append("namespace: expected =NAME")
                namespace = None
        states = tuple(s for s in STATES if s in query.getlist("state"))
        unknown = set(query.getlist("state")) - set(STATES)
        if unknown:
            problems.append("state: unknown " + ", ".join(sorted(unknown)))
        sort = query.get("sort", "name")
        if sort not in SORTS:
            problems.append(f"sort: unknown {sort}")
            sort = "name"
        direction = query.get("dir")
        descending = (SORTS[sort].descending_first if direction not in ("asc", "desc")
                      else direction == "desc")
        after = query.get("after") or None
        before = None if after else query.get("before") or None
        try:
            page = max(1, int(query.get("page", 1)))
        except ValueError:
            page = 1
        state = cls(q=q, cluster=cluster, pool=pool, namespace=namespace, states=states,
                    sort=sort, descending=descending, after=after, before=before,
                    page=page if (after or before) else 1)
        for token in (after, before):
            if token:
                try:
                    decode_cursor(sort, token)
                except BadCursor:
                    problems.append("the page link is out of date: showing the first page")
                    state = dataclasses.replace(state, after=None, before=None, page=1)
        return dataclasses.replace(state, problems=tuple(problems))

    def query(self, **changes):
        """The URL query of this state with `changes`; a change of what is listed or of
        its order starts again at the first page."""
        state = dataclasses.replace(self, **changes)
        if not {"after", "before", "page"} & set(changes):
            state = dataclasses.replace(state, after=None, before=None, page=1)
        query = QueryDict(mutable=True)
        if state.q:
            query["q"] = state.q
        if state.cluster:
            query["cluster"] = state.cluster
        if state.pool is not None:
            query["pool"] = str(state.pool)
        if state.namespace is not None:
            query["namespace"] = "=" + state.namespace
        if state.states:
            query.setlist("state", list(state.states))
        if state.sort != "name":
            query["sort"] = state.sort
        if state.descending != SORTS[state.sort].descending_first:
            query["dir"] = "desc" if state.descending else "asc"
        if state.after:
            query["after"] = state.after
        if state.before:
            query["before"] = state.before
        if state.page != 1 and (state.after or state.before):
            query["page"] = str(state.page)
        return query.urlencode()

    def sorted_by(self, sort):
        """The state a click on `sort`'s header asks for: the other direction when the
        list is sorted by it, else its own first direction."""
        if sort == self.sort:
            return self.query(descending=not self.descending)
        return self.query(sort=sort, descending=SORTS[sort].descending_first)

    @property
    def sort_headers(self):
        """Per sort: its column's label, the query a click on the header asks for, and
        the header's aria-sort (None where the list is not sorted by it)."""
        return {key: {"label": sort.label, "query": self.sorted_by(key),
                      "aria": (("descending" if self.descending else "ascending")
                               if key == self.sort else None)}
                for key, sort in SORTS.items()}

    @property
    def state_choices(self):
        return [(key, label, key in self.states) for key, (label, _) in STATES.items()]

    @property
    def filtered(self):
        return bool(self.q or self.cluster or self.pool is not None
                    or self.namespace is not None or self.states)


def like_pattern(text):
    """`text` as a LIKE pattern matching itself anywhere: its wildcards escaped."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def matching(state):
    """The images the state's search and filters select, unordered."""
    images = Image.objects.all()
    if state.q:
        # Any case, as Unicode says (ICU's lower case, whatever the database's locale),
        # over the name as stored: display text, escaped where the bytes were not UTF-8.
        images = images.filter(RawSQL(
            f'pg_catalog.lower({IMAGES}."name" COLLATE {NATURAL}) LIKE '
            f"pg_catalog.lower(%s::text COLLATE {NATURAL})", (like_pattern(state.q),),
            output_field=BooleanField()))
    if state.cluster:
        images = images.filter(fsid=state.cluster)
    if state.pool is not None:
        images = images.filter(pool_id=state.pool)
    if state.namespace is not None:
        images = images.filter(namespace=state.namespace)
    for name in state.states:
        images = images.filter(STATES[name][1])
    return images


@dataclasses.dataclass
class ListPage:
    images: list
    next_query: str = None
    previous_query: str = None


def page_queryset(state, per_page):
    """The query of one page's keys, (fsid, pool id, namespace, image id, *the sort's
    columns), of per_page + 1 images from the state's cursor on (the one more says
    whether a page follows), in the order the cursor walks; backwards (for a `before`
    cursor) nearest first. Keys only: an unindexed sort keeps the top of every image,
    and keeping whole rows of the view (their JSON keys, watchers, lockers) took 3 times
    as long at 100,000 images (150-300 ms against 60)."""
    sort = SORTS[state.sort]
    token = state.after or state.before
    backwards = state.before is not None
    # Walking backwards reads the index the other way and turns the rows round after.
    descending = state.descending != backwards
    images = matching(state)
    if token:
        values, key = decode_cursor(state.sort, token)
        images = images.filter(RawSQL(
            f"({sort.expression}, {KEY_COLUMNS}) {'<' if descending else '>'} "
            f"({sort.cast}, %s::uuid, %s::bigint, %s::text, %s::text)",
            (*values, *key), output_field=BooleanField()))
    order = [OrderBy(RawSQL(sort.expression, ()), descending=descending)]
    order += [OrderBy(F(column), descending=descending) for column in KEY]
    return images.order_by(*order).values_list(*KEY, *sort.columns)[:per_page + 1]


def images_by_key(keys):
    """The images of `keys` ((fsid, pool id, namespace, image id, ...)), in that order,
    read by primary key. One removed since the keys were read is left out."""
    if not keys:
        return []
    found = Image.objects.filter(RawSQL(
        f"({KEY_COLUMNS}) IN (SELECT * FROM ROWS FROM (pg_catalog.unnest(%s::uuid[]), "
        "pg_catalog.unnest(%s::bigint[]), pg_catalog.unnest(%s::text[]), "
        "pg_catalog.unnest(%s::text[])))",
        ([str(key[0]) for key in keys], *([key[n] for key in keys] for n in (1, 2, 3))),
        output_field=BooleanField()))
    by_key = {(str(image.fsid), image.pool_id, image.namespace, image.image_id): image
              for image in found.order_by()}
    return [by_key[key] for key in ((str(k[0]), k[1], k[2], k[3]) for k in keys)
            if key in by_key]


def page_of(state, per_page):
    """One page of the list: at most per_page images after (or before) the state's
    cursor, and the queries of the pages next to it (None where there is none)."""
    backwards = state.before is not None
    keys = list(page_queryset(state, per_page))
    more = len(keys) > per_page
    keys = keys[:per_page]
    if backwards:
        keys.reverse()
    page = ListPage(images_by_key(keys))
    if not keys:
        if state.after or state.before:  # past the end (rows removed since): start again
            page.previous_query = state.query()
        return page

    def cursor(row):
        fsid, pool_id, namespace, image_id, *values = row
        return encode_cursor(state.sort, values, [str(fsid), pool_id, namespace, image_id])

    if more or backwards:
        page.next_query = state.query(after=cursor(keys[-1]), before=None, page=state.page + 1)
    if (more and backwards) or state.after:
        page.previous_query = state.query(after=None, before=cursor(keys[0]),
                                          page=max(1, state.page - 1))
    return page
