"""Filters and tags of the pages: sizes in binary units as `rbd` and `ceph df` print them,
bar widths, times, and links to an image's page."""
import datetime
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html

register = template.Library()

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


@register.filter
def iec_bytes(value):
    """16777216 -> "16 MiB"; None (unknown) -> "—"."""
    if value is None or value == "":
        return "—"
    value = float(value)
    for unit in UNITS:
        if abs(value) < 1024 or unit == UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024
    return None  # not reached


@register.filter
def bar_width(percent):
    """A percentage as a CSS width, clamped to 0-100 and at least a sliver when not 0."""
    if percent is None:
        return "0%"
    percent = min(max(float(percent), 0.0), 100.0)
    if 0 < percent < 0.5:
        percent = 0.5
    return f"{percent:.1f}%"


@register.filter
def percent(value):
    return "—" if value is None else f"{float(value):.1f}%"


@register.simple_tag
def utc_time(value, precision="minutes"):
    """A time as <time>: UTC in the text (what a page without JavaScript shows) and on
    hover; console.js rewrites the text in the viewer's own zone."""
    if value is None:
        return "—"
    value = value.astimezone(datetime.timezone.utc)
    text = value.strftime("%Y-%m-%d %H:%M:%S" if precision == "seconds" else "%Y-%m-%d %H:%M")
    return format_html('<time datetime="{}" title="{} UTC" data-local="{}">{} UTC</time>',
                       value.isoformat(), value.strftime("%Y-%m-%d %H:%M:%S"), precision, text)


@register.simple_tag
def image_url(image):
    """The page of `image` (a row of console_images): named by its primary key, which
    survives a rename."""
    return reverse("rbdsync_console:image") + "?" + urlencode(
        {"cluster": image.fsid, "pool": image.pool_id, "namespace": image.namespace,
         "id": image.image_id})


@register.filter
def hex_mask(value):
    return "—" if value is None else f"0x{value & 0xFFFFFFFFFFFFFFFF:x}"
