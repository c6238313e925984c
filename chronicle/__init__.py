"""chronicle: turn a long public ML training run into a living, citable chronicle."""

from __future__ import annotations

__version__ = "0.1.0"
