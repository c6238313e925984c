"""Writing and reading files safely: a file replaced whole or not at all (atomic.py), and
opened without following a link planted on the way (nofollow.py)."""
