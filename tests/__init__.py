"""chronicle's tests: test_*.py modules, their shared helpers in tests/support/, and the
nightly rehearsal in tests/rehearsal/ (`python -m tests.rehearsal`)."""
