"""Filters for the page: sizes in binary units as `rbd` and `ceph df` print them, and
bar widths."""
from django import template

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
