"""How a step number is written: every page of both editions writes a training step with
thousands separators ("step 7,220", "第 7,220 步", "steps 250,500–250,830")."""

from __future__ import annotations

import re

# A step of four digits or more written without separators, alone or in a range, after
# "step(s)" or inside 第 … 步 (a range's first step may be written either way).
_NUMBER = r"(?<![\d,.])(?:\d{4,}|\d{1,3}(?:,\d{3})+)"
_RANGE = rf"{_NUMBER}(?:\s*[–-]\s*{_NUMBER})?"
UNFORMATTED = re.compile(
    rf"\b[Ss]teps?\s+(?P<en>{_RANGE})|第\s*(?P<zh>{_RANGE})\s*步")


def unformatted_steps(text: str) -> list[str]:
    """Return each step (or range of steps) in `text` written without thousands
    separators ("step 7220", "第 7220 步", "steps 7,220-7440"), as it appears."""
    out = []
    for match in UNFORMATTED.finditer(text):
        numbers = re.findall(_NUMBER, match.group("en") or match.group("zh"))
        if any(len(n) >= 4 and "," not in n for n in numbers):
            out.append(match.group(0))
    return out
