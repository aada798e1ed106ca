"""The in-process half of the recorder: the import hook and the one path of every decode.

``start()`` runs from the recorder's ``sitecustomize`` at the start of each Python
process of the run.  It writes the process's "start" line and puts a meta-path
finder in front of ``sys.meta_path``.  The finder does nothing until the harness
imports one of the modules in ``_readers.PATCHES``; it then lets the normal import
run and, right after the module's code has executed (before the importer sees the
module), wraps its readers.  Nothing video-related is imported by the recorder.

Every wrapped decode goes through ``through()``: the indices the harness asked for
pass there, the decode runs, and the indices the decode gave back are logged.
"""

import functools
import os
import sys
import threading

from . import _log

_tls = threading.local()
_installed = {"done": False}
# What the process's start line says of the run's frame plan (None: no plan).
_state = {"plan": None}
# module name -> functions that wrap the readers of that module, set by start()
_patches = {}


def start():
    """Installs the recorder in this process if the run's log is set; never raises."""
    if _installed["done"]:
        return
    log = os.environ.get(_log.ENV_LOG)
    if not log:
        return
    _installed["done"] = True
    try:
        _log.configure(log)
        from . import _plan

        _state["plan"] = _plan.load()
        if _state["plan"] not in (None, "applied"):
            _log.warn("the frame plan is %s" % _state["plan"])
        _start_line()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_forked)
        from . import _readers

        _patches.update(_readers.PATCHES)
        sys.meta_path.insert(0, _Finder())
        for name in list(_patches):
            module = sys.modules.get(name)
            if module is not None:
                _patch(module)
    except Exception as err:  # the harness goes on, unrecorded
        _log.warn("could not install the frame recorder (%s: %s)" % (type(err).__name__, err))


def _start_line():
    line = {
        "schema": _log.SCHEMA,
        "event": "start",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": _argv(),
        "cwd": _cwd(),
        "at": _log.now(),
    }
    if _state["plan"] is not None:
        line["plan"] = _state["plan"]
    line["env"] = _decoder_env()
    line["versions"] = _versions()
    _log.write(line)


# What decides which decoder reads a video: lmms-eval's read_video backend, qwen_vl_utils'
# forced reader, and their thread settings (docs/recorder.md).
DECODER_ENV = ("LMMS_VIDEO_DECODE_BACKEND", "FORCE_QWENVL_VIDEO_READER", "TORCHCODEC_NUM_THREADS", "LMMS_VIDEO_DECORD_THREADS")
DECODER_ENV_PREFIXES = ("LMMS_VIDEO_TORCHCODEC_",)

# The installed distributions whose presence or release picks the reader or changes its count
# (qwen_vl_utils reads with torchcodec whenever it is installed; torchcodec before 0.15
# decodes a discarded leading key frame differently).
# The distribution of each watched top-level module whose name differs from it.
_DIST_OF = {"qwen_vl_utils": "qwen-vl-utils", "lmms_eval": "lmms-eval"}

DISTRIBUTIONS = (
    "decord",
    "eva-decord",
    "torchcodec",
    "torch",
    "av",
    "torchvision",
    "qwen-vl-utils",
    "transformers",
    "opencv-python",
    "opencv-python-headless",
    "lmms-eval",
    "lmms_eval",
    "vlmeval",
)


def _decoder_env():
    env = {}
    for key, value in os.environ.items():
        if key in DECODER_ENV or key.startswith(DECODER_ENV_PREFIXES):
            env[key] = value
    return dict(sorted(env.items()))


def _versions():
    """name -> version of the DISTRIBUTIONS installed, read from their metadata without
    importing them; computed once per process tree (a forked child has the same)."""
    if _state.get("versions") is None:
        found = {}
        try:
            import importlib.metadata as metadata

            for name in DISTRIBUTIONS:
                try:
                    version = metadata.version(name)
                except Exception:
                    continue
                # lmms-eval and lmms_eval name one distribution.
                if version and name.replace("_", "-") not in found:
                    found[name.replace("_", "-")] = version
        except Exception:
            pass
        _state["versions"] = found
    return _state["versions"]


def _argv():
    """The process's whole command line.  sys.argv is incomplete this early (for
    `python -m pkg` it is still ['-m', ...]): sys.orig_argv (3.10+), or Linux's
    /proc/self/cmdline, else what sys.argv holds."""
    argv = getattr(sys, "orig_argv", None)
    if argv:
        return list(argv)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            raw = f.read()
        if raw:
            return [os.fsdecode(a) for a in raw.rstrip(b"\0").split(b"\0")]
    except OSError:
        pass
    return list(getattr(sys, "argv", None) or [])


def _forked():
    try:
        _tls.depth = 0
        _log.reset_after_fork()
        _start_line()
    except Exception:
        pass


def _cwd():
    try:
        return os.getcwd()
    except OSError:
        return None


# --- the import hook -------------------------------------------------------------


class _Finder(object):
    """Finds nothing itself: for a watched module it asks the finders behind it and
    arranges for the module's readers to be wrapped once its code has run."""

    def __init__(self):
        self._busy = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _patches or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        except Exception:
            return None  # let the import machinery find it (and fail) as it would have
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        _hook_loader(spec)
        return spec

    def invalidate_caches(self):
        pass


def _hook_loader(spec):
    loader = spec.loader
    original = loader.exec_module

    @functools.wraps(original)
    def exec_module(module):
        module.__dict__.pop("__frameaudit_patched__", None)  # importlib.reload runs anew
        original(module)
        _patch(module)

    try:
        # On the loader instance (one per module for file loaders), so that
        # module.__loader__ keeps its type.
        loader.exec_module = exec_module
    except Exception:
        spec.loader = _Loader(loader, exec_module)


class _Loader(object):
    """Fallback for a loader whose exec_module cannot be replaced in place."""

    def __init__(self, inner, exec_module):
        self._inner = inner
        self.exec_module = exec_module

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _patch(module):
    name = getattr(module, "__name__", None)
    patch = _patches.get(name)
    if patch is None or module.__dict__.get("__frameaudit_patched__"):
        return
    try:
        module.__dict__["__frameaudit_patched__"] = True
        patch(module)
        # Which decoding module this process imported, and its release: what decides
        # the decoder when no decode of a video is logged (docs/recorder.md).
        top = name.split(".")[0]
        if top not in _state.setdefault("imported", set()):
            _state["imported"].add(top)
            dist = _DIST_OF.get(top, top)
            event({"event": "import", "module": top, "version": _versions().get(dist)})
    except Exception as err:
        _log.warn(
            "could not wrap the video readers of %s (%s: %s); its decodes are not recorded"
            % (name, type(err).__name__, err)
        )


# --- the path of every decode ------------------------------------------------------


def through(reader, call, asked=None, taken=None, meta=None, video=None, steer=None):
    """Runs one decode and logs it.  Every wrapped reader calls this.

    reader: the reader's name in the log ("decord", "pyav", ...).
    call(): runs the harness's decode, on the harness's own arguments.
    asked(): the indices the harness asked for, as a list of ints, read before the
        decode (None when they are known only from its result).
    taken(result, asked): the indices the decode gave back, when they are not
        ``asked`` itself (lmms-eval's PyAV helpers drop duplicates, ...); None if
        they cannot be known exactly, and then nothing is logged.
    meta(result): (video, num_frames, fps), read after the decode.

    Only the outermost wrapped call of a thread records: decord's vr[3] runs
    seek_accurate + next inside, and those are not decodes of their own.

    A frame plan (``--plan``, docs/intervention.md) is looked up here, between ``asked``
    and ``call``: a reader that can be steered gives ``video()``, the path it opened, and
    ``steer(indices)``, which decodes other indices than the harness's; a planned video
    is decoded at the plan's indices, and the log has both.
    """
    depth = getattr(_tls, "depth", 0)
    if depth:
        return call()
    indices = None
    try:
        indices = asked() if asked is not None else None
    except Exception:
        indices = _UNREAD
    planned = None
    if steer is not None and video is not None:
        try:
            from . import _plan

            planned = _plan.lookup(video())
        except Exception as err:
            _log.warn("could not look the frame plan up (%s: %s)" % (type(err).__name__, err))
    refused = None
    _tls.depth = depth + 1
    try:
        if planned is not None:
            try:
                result = steer(planned[0])
            except Exception as err:
                # The plan cannot be decoded here (a frame past the video's end): the
                # harness's own decode runs, and the log says the plan was refused.
                refused = "%s: %s" % (type(err).__name__, err)
                _log.warn("a planned decode was refused, the harness's frames were decoded (%s)" % refused)
                planned = None
                result = call()
        else:
            result = call()
    finally:
        _tls.depth = depth
    if planned is None:
        _record(reader, result, indices, taken, meta, refused=refused)
    else:
        asked_by_harness = None if indices is _UNREAD else indices
        _record(
            reader,
            result,
            list(planned[0]),
            None,
            meta,
            plan={"asked": asked_by_harness, "strategy": planned[1], "pass": planned[2]},
        )
    return result


_UNREAD = object()


def _record(reader, result, indices, taken, meta, plan=None, refused=None):
    try:
        if indices is _UNREAD:
            raise ValueError("the indices of a %s decode could not be read" % reader)
        if taken is not None:
            indices = taken(result, indices)
        if indices is None:
            return  # this decode cannot be known exactly (see docs/recorder.md)
        video, num_frames, fps = meta(result) if meta is not None else (None, None, None)
        line = {
            "event": "decode",
            "pid": os.getpid(),
            "reader": reader,
            "video": video,
            "indices": [int(i) for i in indices],
            "num_frames": _count(num_frames),
            "fps": _log.number(fps),
            "at": _log.now(),
        }
        if refused is not None:
            line["planned"] = False
            line["refused"] = refused
        if plan is not None:
            # The plan's frames were decoded, not those the harness asked for.
            line["planned"] = True
            line["asked"] = plan["asked"]
            line["strategy"] = plan["strategy"]
            line["pass"] = plan["pass"]
        _log.write(line)
    except Exception as err:
        _log.warn("could not record a %s decode (%s: %s)" % (reader, type(err).__name__, err))


def event(line):
    """Logs one line of another event than a decode (``reader_choice``, ``reader_failed``),
    with the process and the time; never raises."""
    try:
        out = {"event": line.pop("event"), "pid": os.getpid()}
        out.update(line)
        out["at"] = _log.now()
        _log.write(out)
    except Exception as err:
        _log.warn("could not log an event (%s: %s)" % (type(err).__name__, err))


def _count(n):
    try:
        n = int(n)
    except Exception:
        return None
    return n if n > 0 else None


# --- helpers for the readers ---------------------------------------------------


def video_path(source):
    """The video as opened: an absolute path (file:// dropped), a URL as given, or
    None for bytes, buffers and file objects without a name."""
    try:
        if hasattr(source, "read") or hasattr(source, "readinto"):
            source = getattr(source, "name", None)
        if isinstance(source, bytes):
            source = os.fsdecode(source)
        elif source is not None and not isinstance(source, str):
            source = os.fspath(source)  # pathlib.Path; other objects: TypeError -> None
        if not isinstance(source, str) or not source:
            return None
        if source.startswith("file://"):
            source = source[len("file://") :]
        elif "://" in source:
            return source
        return os.path.abspath(source)
    except Exception:
        return None


def int_list(x, num_frames=None):
    """The ints in a list, tuple, range, ndarray, tensor or scalar, in order, duplicates
    kept; negative ones counted from the end when num_frames is known.  None for
    anything that could not be read without consuming it (iterators)."""
    if isinstance(x, range):
        values = list(x)
    elif isinstance(x, (list, tuple)):
        values = _flat(x)
    elif hasattr(x, "tolist"):  # numpy arrays and scalars, torch tensors
        v = x.tolist()
        values = _flat(v) if isinstance(v, list) else [v]
    elif hasattr(x, "__index__"):
        values = [x]
    else:
        return None
    out = [int(v) for v in values]
    if num_frames:
        out = [i + num_frames if i < 0 else i for i in out]
    return out


def _flat(seq):
    out = []
    for v in seq:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        elif hasattr(v, "tolist") and not hasattr(v, "__index__"):
            t = v.tolist()
            out.extend(_flat(t) if isinstance(t, list) else [t])
        else:
            out.append(v)
    return out


def wraps_once(cls, name, make):
    """Replaces cls.name by make(original), once."""
    original = cls.__dict__.get(name)
    if original is None or getattr(original, "__frameaudit_wrapped__", False):
        return
    wrapper = make(original)
    functools.update_wrapper(wrapper, original)
    wrapper.__frameaudit_wrapped__ = True
    setattr(cls, name, wrapper)


def replace_function(module, name, make):
    """Replaces the module-level function module.name by make(original), once."""
    original = getattr(module, name, None)
    if original is None or getattr(original, "__frameaudit_wrapped__", False):
        return None
    wrapper = make(original)
    functools.update_wrapper(wrapper, original)
    wrapper.__frameaudit_wrapped__ = True
    setattr(module, name, wrapper)
    return original, wrapper
