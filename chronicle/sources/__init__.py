"""Sources: one module per origin. `fetch_*` touch the network; `parse_*` are pure.

The simulated source emits the same raw payloads the real APIs return and goes through
the same `parse_*` functions, so the demo exercises the real parsing path.
"""
