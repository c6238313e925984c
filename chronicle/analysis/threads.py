"""What a day did to the archived issue threads (analysis stage, pure): threads opened,
comments made, and comments edited in place that day, with the text they had before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from chronicle.analysis.records import EditedComment, NewComment, ThreadUpdate
from chronicle.analysis.series import day_bounds
from chronicle.models import Thread, iso


def thread_updates(day: date, threads: Mapping[int, Sequence[Thread]]) -> list[ThreadUpdate]:
    """Return the threads opened, commented on or edited during the day."""
    start, end = day_bounds(day)
    out: list[ThreadUpdate] = []
    for number in sorted(threads):
        states = threads[number]
        if not states:
            continue
        latest = states[-1]
        new: list[NewComment] = []
        edited: list[EditedComment] = []
        for c in latest.comments:
            made, changed = c.created_at.timestamp(), c.updated_at.timestamp()
            if start <= made < end:
                new.append({"id": c.id, "author": c.author, "created_at": iso(c.created_at),
                            "url": c.url, "body": c.body, "edited": c.edited})
            elif made < start and start <= changed < end and c.edited:
                edited.append({"id": c.id, "author": c.author,
                               "created_at": iso(c.created_at),
                               "updated_at": iso(c.updated_at), "url": c.url, "body": c.body,
                               "previous_body": _body_before(states, c.id, start)})
        opened = start <= latest.created_at.timestamp() < end
        if new or edited or opened:
            out.append({"number": number, "title": latest.title, "url": latest.url,
                        "labels": list(latest.labels), "state": latest.state, "opened": opened,
                        "new_comments": new, "edited_comments": edited})
    return out


def _body_before(states: Sequence[Thread], comment_id: int, start: float) -> str | None:
    """Return the text a comment had before `start` in the archived states, if any."""
    before = None
    for s in states:
        for old in s.comments:
            if old.id == comment_id and old.updated_at.timestamp() < start:
                before = old.body
    return before
