"""Local fakes of remote services for tests (real HTTP servers on 127.0.0.1)."""
