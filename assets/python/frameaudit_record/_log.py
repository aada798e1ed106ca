"""The frames log: JSON Lines, UTF-8, one object per line.

Every line is written by one ``os.write`` on a descriptor opened with O_APPEND and
held under an exclusive ``flock`` for the write, so lines from concurrent
processes and threads never interleave.  A write that fails warns once per process
on stderr and is otherwise dropped: the recorder never stops the harness.
"""

import json
import math
import os
import sys
import threading
import time

try:
    import fcntl
except ImportError:  # not POSIX: O_APPEND alone
    fcntl = None

SCHEMA = "frameaudit/frames-log@1"
# The absolute path of the log, handed to every process of the run.
ENV_LOG = "FRAMEAUDIT_RECORD_LOG"

_state = {"path": None, "warned": False, "error": None}

# Held for every write, and across os.fork(): a child forked while another thread held
# the flock would keep a copy of that descriptor, and the lock, for good.
_lock = threading.RLock()  # reentrant: a signal handler may log mid-write
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release, after_in_child=_lock.release)


def configure(path):
    _state["path"] = path


def path():
    return _state["path"]


def now():
    """UTC time in the log's form, e.g. 2026-12-01T12:00:00Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def number(x):
    """A finite float, or None (JSON has no NaN)."""
    try:
        f = float(x)
    except Exception:
        return None
    return f if math.isfinite(f) else None


def warn(message):
    """Prints one warning on stderr per process; later ones are dropped."""
    if _state["warned"]:
        return
    _state["warned"] = True
    try:
        sys.stderr.write("frameaudit_record: warning: %s\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


def reset_after_fork():
    # A forked child is a new process: it gets its own one warning.
    _state["warned"] = False


def write(obj, path=None, quiet=False):
    """Appends ``obj`` as one line; True if it was written."""
    target = path or _state["path"]
    if not target:
        return False
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))
        # A path that is not valid UTF-8 comes in with surrogate escapes; the log stays UTF-8.
        line = (text + "\n").encode("utf-8", "replace")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        with _lock:
            fd = os.open(target, flags, 0o666)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)  # releases the flock
        return True
    except Exception as err:
        _state["error"] = _reason(err)
        if not quiet:
            warn(
                "cannot write the frames log %s (%s); the run goes on, but this "
                "process's decodes may be missing from it" % (target, _state["error"])
            )
        return False


def last_error():
    """Why the last failed write failed."""
    return _state["error"]


def _reason(err):
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return "%s: %s" % (type(err).__name__, err)
