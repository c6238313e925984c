"""Archived issue threads -> one page per thread plus an index (edits kept as edits).

A thread's comments are the union over every stored snapshot: a comment's text is shown
as it stands now, each earlier archived text in a collapsed block, and a comment that
disappeared from GitHub stays, marked with the snapshot since which it is gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.models import Archived, Comment, Thread
from chronicle.render import front_matter, render
from chronicle.render.i18n import Language
from chronicle.render.sanitize import comment_block, title_text


def comment_versions(states: Sequence[tuple[Archived, Thread]],
                     lang: Language) -> list[dict[str, Any]]:
    """Return every comment ever archived, oldest first, with its distinct texts."""
    seen: dict[int, dict[str, Any]] = {}
    for i, (snap, thread) in enumerate(states):
        for c in thread.comments:
            entry = seen.setdefault(c.id, {"comment": c, "versions": []})
            entry["comment"], entry["last"] = c, i
            versions: list[dict[str, Any]] = entry["versions"]
            if not versions or versions[-1]["body"] != c.body:
                versions.append({"body": c.body, "updated_at": c.updated_at,
                                 "seen": snap.taken_at})
    out = []
    for cid, entry in seen.items():
        last: Comment = entry["comment"]
        versions = [{**v, "block": comment_block(v["body"], lang)} for v in entry["versions"]]
        out.append({"id": cid, "author": last.author, "created_at": last.created_at,
                    "updated_at": last.updated_at, "url": last.url,
                    "edited": last.edited or len(versions) > 1, "versions": versions,
                    "block": versions[-1]["block"], "gone_since": (states[entry["last"] + 1][0].id
                                       if entry["last"] + 1 < len(states) else None)})
    out.sort(key=lambda e: (e["created_at"], e["id"]))
    return out


def render_thread(states: Sequence[tuple[Archived, Thread]], lang: Language) -> str:
    """Return the Markdown page of one archived thread, in `lang` (its text as written)."""
    thread = states[-1][1]
    # An explicit title: mkdocs would otherwise take the h1's text, unescaped, into <title>.
    meta = {"title": title_text(f"#{thread.number} {thread.title}")}
    return front_matter(meta) + render(
        "thread.md.j2", lang, number=thread.number, title=thread.title, state=thread.state,
        labels=list(thread.labels), author=thread.author, created_at=thread.created_at,
        url=thread.url, snapshots=len(states), first_seen=states[0][0].taken_at,
        last_seen=states[-1][0].taken_at, body=comment_block(thread.body, lang),
        comments=comment_versions(states, lang))


def thread_pages(history: Mapping[int, Sequence[tuple[Archived, Thread]]],
                 snapshots: Sequence[Archived], lang: Language) -> dict[str, str | bytes]:
    """Return threads/index.md and threads/<number>.md for every archived thread."""
    out: dict[str, str | bytes] = {}
    rows = []
    for number in sorted(history):
        states = history[number]
        if not states:
            continue
        thread = states[-1][1]
        out[f"threads/{number}.md"] = render_thread(states, lang)
        rows.append({"number": number, "title": thread.title, "state": thread.state,
                     "comments": len(thread.comments), "updated_at": thread.updated_at})
    out["threads/index.md"] = render("threads_index.md.j2", lang, threads=rows,
                                     snapshots=len(snapshots))
    return out
