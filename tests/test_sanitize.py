"""Untrusted issue text cannot inject script, links, template syntax or break its page."""

from __future__ import annotations

import markdown

from chronicle.render import md_text
from chronicle.render.i18n import ENGLISH
from chronicle.render.sanitize import comment_block, comment_html, plain_text, title_text

HOSTILE = """---
title: owned
---
# Takeover
<script>alert("x")</script><img src=x onerror=alert(1)>
[click](javascript:alert(1)) <a href="data:text/html,boom">d</a> <a href="JaVaScRiPt:x">j</a>
{{ config.site_name }} {% include "x" %} <!-- bot-marker: hidden-note -->
<div markdown="1" style="position:fixed">styled</div></div></article>
```python
print("unclosed")
"""


def test_hostile_comment_is_neutralised() -> None:
    html = str(comment_html(HOSTILE))
    lowered = html.lower()
    assert "<script" not in lowered and "alert(\"x\")" not in html
    assert "javascript:" not in lowered and "data:text" not in lowered
    assert "onerror" not in lowered and "style=" not in lowered and "markdown=" not in lowered
    assert "{{" not in html and "{%" not in html and "&#123;&#123; config.site_name" in html
    assert "bot-marker" not in html and "hidden-note" not in html
    assert "</article>" not in html and html.count("<div") == html.count("</div>")
    assert not html.lstrip().startswith("---")
    assert "<h1" not in html and "<h4>Takeover</h4>" in html  # demoted below page headings


def test_unclosed_fence_and_stray_div_cannot_swallow_the_page() -> None:
    page = "# Page\n\n" + str(comment_block(HOSTILE, ENGLISH)) + "\n\nAfter the *comment*.\n"
    html = markdown.markdown(page, extensions=["md_in_html", "tables", "toc"])
    assert "<p>After the <em>comment</em>.</p>" in html
    assert html.count("<div") == html.count("</div>")


def test_fence_markers_inside_code_are_entities() -> None:
    # Markdown's fence preprocessor runs before raw HTML is set aside: no ``` may survive.
    html = str(comment_html("````\n```\ninner\n```\n````"))
    assert "```" not in html and "&#96;&#96;&#96;" in html


def test_images_become_links_and_links_are_nofollow() -> None:
    html = str(comment_html("![plot](https://example.com/p.png) [site](https://example.com/)"))
    assert "<img" not in html
    assert 'href="https://example.com/p.png"' in html and "[image: plot]" in html
    assert 'rel="nofollow noopener noreferrer ugc"' in html


def test_ordinary_markdown_survives() -> None:
    html = str(comment_html("Loss is **2.31**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n`x < y`"))
    assert "<strong>2.31</strong>" in html and "<table>" in html and "<code>x &lt; y</code>" in html


def test_plain_text_and_md_text() -> None:
    assert plain_text("<b>bold</b> <!-- x -->  text\n more") == "bold text more"
    assert plain_text("word " * 100, limit=20).endswith("…")
    escaped = str(md_text("[x](javascript:y) <b> {{ z }} | *"))
    assert "<b>" not in escaped and "&lt;b&gt;" in escaped
    assert "\\[x\\]\\(" in escaped and "{" not in escaped and "|" not in escaped
    rendered = markdown.markdown(escaped)
    assert "<a" not in rendered and "<em>" not in rendered


def test_title_text_cannot_close_the_title_element() -> None:
    title = title_text("Run </title><script>alert(1)</script> & <b>more</b>")
    assert "<" not in title and ">" not in title and title.startswith("Run ")
    assert "& more" in title


def test_words_in_the_other_language_are_marked_for_screen_readers() -> None:
    from chronicle.render.i18n import language

    chinese = language("zh")
    # An English comment on a Chinese page, a Chinese one on an English page: marked.
    assert 'lang="en"' in comment_block("Loss spiked at step 1200.", chinese)
    assert 'lang="zh"' in comment_block("损失在第 1200 步突增。", ENGLISH)
    # The page's own language, or words without letters, are not.
    assert "lang=" not in comment_block("Loss spiked at step 1200.", ENGLISH)
    assert "lang=" not in comment_block("损失在第 1200 步突增。", chinese)
    assert "lang=" not in comment_block("+1 👍 1200", chinese)
    assert ENGLISH.quoted("零点") == "zh" and chinese.quoted("MoE routing") == "en"
