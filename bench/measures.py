"""Summaries every benchmark module prints: median, p95, a process tree's resident set."""

from __future__ import annotations

import os
import statistics


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def p95(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1)


def tree_rss_kb(root: int) -> int:
    """Resident set of ``root`` and every descendant, from ``/proc``."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        rss[int(entry.name)] = int(fields[21]) * page_kb
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total
