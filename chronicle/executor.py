"""One object per command owns everything the command runs beside itself (bottom layer).

A command (cli.py, demo.py, a test) creates one `Executor` in a `with` and passes it down:
to the sealing of days (its render workers draw the charts), to the build (the workers
that draw its charts, the process that builds a translated edition, the folders it stages
the site in). Closing it ends every process it started and removes every folder it was
asked to; nothing outlives the command, and nothing is kept in a module global.

Its processes die with their parent however the parent ends, SIGKILL included, which no
`atexit` hook or `finally` survives. Each child is `python -m chronicle.executor`, told
its parent's pid and a socket to it:
- it reads its work from the socket: when the parent is gone the socket reads as closed,
  so an idle child ends at once;
- a thread of its own waits on the parent's pidfd (Linux; elsewhere it polls the parent's
  pid) and ends the child when the parent exits, also in the middle of a long job;
- when it was started by the parent's main thread, the kernel also kills it
  (`PR_SET_PDEATHSIG`): that fires even while the child is inside native code that holds
  the GIL (vl-convert), which the thread would have to wait for. Only from the main
  thread: the signal fires when the *thread* that started the child ends, and a worker
  thread of the parent may end long before the parent.
No `multiprocessing`: its spawned children need its resource tracker, a third process
that lived on, with the workers, after a SIGKILLed snapshot (~215 MB), and a worker
blocked on its call queue never saw the parent go (it holds the queue's write end too).

Nothing here imports the rest of chronicle: a render worker starts by importing this
module only, and the function it is sent (chronicle/workers/draw.py) then.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import queue
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# The speed-ups a command may run beside its own work. Each stays only where `make bench`
# shows it is worth at least 10% on its row (documentation/pages/benchmarks.md): the bench
# turns each off with `Executor(without=...)` and times the row again.
SPEEDUPS = ("beside", "engine-cache", "svg-cache", "seal-workers")
# Those that run work in another process: on one core they would only take turns.
PARALLEL = ("beside", "seal-workers")
_PR_SET_PDEATHSIG = 1
_EXIT_ORPHANED = 70  # a child's exit code when its parent went first
_WATCH_SECONDS = 0.2  # how often a child polls its parent where there is no pidfd
_STOP_SECONDS = 5.0  # how long closing waits for a child that was asked to stop


class ChildGone(RuntimeError):
    """A child process ended (killed, crashed) before it answered."""


@dataclass
class Child:
    """A process an `Executor` started: `python -m chronicle.executor` running one function
    of ours with a connection to this process."""

    name: str
    process: subprocess.Popen[bytes]
    conn: Connection

    def send(self, message: Any) -> None:
        """Send `message` to the child; raise ChildGone if it has ended."""
        try:
            self.conn.send(message)
        except OSError as err:
            raise ChildGone(f"{self.name} ended ({self.describe_end()})") from err

    def recv(self) -> Any:
        """Return the child's next message; raise ChildGone if it ended without one."""
        try:
            return self.conn.recv()
        except (EOFError, OSError) as err:
            raise ChildGone(f"{self.name} ended ({self.describe_end()})") from err

    def describe_end(self) -> str:
        """Say how the child ended (waiting for it, it has closed its end)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_STOP_SECONDS)
        code = self.process.returncode
        if code is None:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
            return f"killed by signal {-code}"
        return f"exit code {code}"

    def stop(self) -> None:
        """End the child now if it still runs (its work is not wanted), and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.conn.close()

    def join(self) -> None:
        """Close the connection (the child's cue to end), wait for it, kill it if it does
        not end in time."""
        self.conn.close()
        try:
            self.process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class RenderPool:
    """Worker processes that run functions sent to them (the charts' static renders): a
    small `ProcessPoolExecutor` whose workers die with their parent.

    One thread per worker feeds it jobs from a shared queue, so the costliest job, sent
    first, starts first, and a free worker takes the next.
    """

    def __init__(self, executor: Executor, size: int) -> None:
        self.size = size
        self._jobs: queue.Queue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] \
            = queue.Queue()
        self._workers = [executor.start(_serve, name=f"render worker {i + 1}")
                         for i in range(size)]
        self._threads = [threading.Thread(target=self._feed, args=(w,), daemon=True,
                                          name=f"chronicle-render-{i + 1}")
                         for i, w in enumerate(self._workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run `fn(*args)` in a worker; its future raises ChildGone if the worker died."""
        future: Future[Any] = Future()
        self._jobs.put((future, fn, args))
        return future

    def _feed(self, worker: Child) -> None:
        broken: ChildGone | None = None
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            if broken is None:
                try:
                    worker.send((fn, args))
                    ok, value = worker.recv()
                except ChildGone as err:
                    broken = err
            if broken is not None:
                future.set_exception(broken)
            elif ok:
                future.set_result(value)
            else:
                future.set_exception(RuntimeError(f"{worker.name} failed:\n{value}"))

    def close(self, abort: bool = False) -> None:
        """Let the workers finish the jobs sent, then end them (`abort`: end them now,
        the jobs' futures raise ChildGone)."""
        if abort:
            for worker in self._workers:
                worker.stop()
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()
        for worker in self._workers:
            worker.join()


@dataclass
class Executor:
    """What one command runs beside itself: render workers, child processes, staging
    folders. Use it in a `with`; `close` ends and removes them all.

    `without` names speed-ups of `SPEEDUPS` not to use (the bench measures each on and
    off); `cores` overrides the machine's count (one core runs everything in-process).
    """

    without: Collection[str] = ()
    cores: int | None = None
    _stack: ExitStack = field(default_factory=ExitStack, init=False, repr=False)
    _pool: RenderPool | None = field(default=None, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        unknown = set(self.without) - set(SPEEDUPS)
        if unknown:
            raise ValueError(f"unknown speed-ups {sorted(unknown)}; known: {SPEEDUPS}")
        if self.cores is None:
            self.cores = os.cpu_count() or 1

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        # A command that fails (or is interrupted) waits for no render to finish.
        self.close(abort=kind is not None)

    def uses(self, speedup: str) -> bool:
        """Return whether the command runs `speedup` (one of SPEEDUPS): not where it was
        turned off, nor a PARALLEL one on one core (where it would only take turns)."""
        if speedup not in SPEEDUPS:
            raise ValueError(f"unknown speed-up {speedup!r}; known: {SPEEDUPS}")
        return speedup not in self.without and (speedup not in PARALLEL
                                                or (self.cores or 1) >= 2)

    # Processes.

    def start(self, target: Callable[..., None], *args: Any, name: str,
              env: Mapping[str, str] | None = None) -> Child:
        """Start a child process running `target(connection, *args)` (a module-level
        function: it is sent by reference) and return it; it is stopped on `close`.

        `env`: variables the child gets on top of this process's environment (this
        process's own is never changed).
        """
        self._check_open()
        ours, theirs = socket.socketpair()
        main = threading.current_thread() is threading.main_thread()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "chronicle.executor", str(theirs.fileno()),
                 str(os.getpid()), "1" if main else "0"],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})})
        finally:
            theirs.close()
        child = Child(name, process, Connection(ours.detach()))
        self._stack.callback(child.stop)
        try:
            child.send(list(sys.path))  # what this process imports from, as spawn did
            child.send((target, args))
        except ChildGone:
            pass  # the caller hears it at its first recv
        return child

    def render_pool(self, size: int) -> RenderPool | None:
        """Return the render workers, started now with `size` workers if none run yet
        (None for a size below 1)."""
        self._check_open()
        if self._pool is None and size >= 1:
            try:
                self._pool = RenderPool(self, size)
            except OSError:
                return None  # no process to be had: the caller draws in its own
        return self._pool

    def stop_render_workers(self, abort: bool = False) -> None:
        """End the render workers (each holds vl-convert's JavaScript runtime, ~190 MB)
        once the command draws no more with them; a later drawing starts its own."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.close(abort)

    # Folders.

    def remove_on_close(self, path: Path) -> Path:
        """Remove the folder `path` (if it still exists) when the executor closes."""
        self._stack.callback(shutil.rmtree, path, ignore_errors=True)
        return path

    def callback(self, fn: Callable[[], None]) -> None:
        """Call `fn` on close (after what was registered after it, like an ExitStack)."""
        self._stack.callback(fn)

    def close(self, abort: bool = False) -> None:
        """End every process this executor started and remove its folders (`abort`: do
        not let the render workers finish what they were sent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.stop_render_workers(abort)
        finally:
            self._stack.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this Executor is closed; a command creates a new one")


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables for the duration of a block, then restore them (for
    libraries that read only the environment, e.g. mkdocs's SOURCE_DATE_EPOCH)."""
    with preserved(*values):
        os.environ.update(values)
        yield


@contextlib.contextmanager
def preserved(*names: str) -> Iterator[None]:
    """Restore the environment variables `names` as they were when the block began,
    whatever the block (or a library it calls) set them to."""
    old = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# The child's side.

def _serve(conn: Connection) -> None:
    """A render worker: run each (function, args) received, send back (ok, result), until
    the parent closes the connection."""
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, fn(*args))
        except Exception:
            reply = (False, traceback.format_exc())
        try:
            conn.send(reply)
        except OSError:
            return


def libc() -> ctypes.CDLL | None:
    """Return the C library on Linux (prctl, renameat2, malloc_trim: calls Python does not
    wrap), with errno kept for `ctypes.get_errno`; None elsewhere or if it cannot load.
    Not kept: loading it again is a lookup of a library every process has loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def die_with_parent(parent: int, kernel_signal: bool) -> None:
    """End this process when `parent` exits, however it exits (see the module docstring)."""
    c = libc()
    if kernel_signal and c is not None:
        with contextlib.suppress(AttributeError):
            c.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it went before the signal was armed
        os._exit(_EXIT_ORPHANED)
    threading.Thread(target=_watch, args=(parent,), daemon=True,
                     name="chronicle-parent-watch").start()


def _watch(parent: int) -> None:
    pidfd: int | None = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(parent)
    if pidfd is not None and os.getppid() == parent:
        select.select([pidfd], [], [])  # readable once the parent has exited
    else:
        while os.getppid() == parent:
            time.sleep(_WATCH_SECONDS)
    os._exit(_EXIT_ORPHANED)


def _child_main(argv: list[str]) -> None:
    fd, parent, kernel_signal = int(argv[0]), int(argv[1]), argv[2] == "1"
    # Ctrl-C reaches the terminal's whole process group: the parent decides what stops
    # (closing its executor ends this process), so a child prints no traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent, kernel_signal)
    conn = Connection(fd)
    try:
        path = conn.recv()
        sys.path[:] = [p for p in path if isinstance(p, str)]
        target, args = conn.recv()
    except (EOFError, OSError):
        return
    target(conn, *args)


if __name__ == "__main__":
    _child_main(sys.argv[1:])
