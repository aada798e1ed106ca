"""The wrapped video readers: for each watched module, the function that wraps it.

Each wrapper hands the decode to ``_record.through`` and changes nothing else: the
harness's arguments go to the reader as they came, and its result (or exception)
comes back as the reader gave it.  docs/recorder.md lists what is recorded exactly.
"""

import collections.abc
import functools
import os
import threading

from ._record import event, int_list, replace_function, through, video_path, wraps_once

_tls = threading.local()


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


# --- decord ----------------------------------------------------------------------


def _decord(module):
    """decord.VideoReader, patched in place (every reference to the class sees it)."""
    cls = getattr(module, "VideoReader", None)
    if cls is None:
        return
    import numpy as np  # decord.video_reader has imported it

    position = getattr(module, "_CAPI_VideoReaderGetCurrentPosition", None)

    def meta(self):
        def read(result):
            video = self.__dict__.get("_frameaudit_video")
            try:
                n = len(self)
            except Exception:
                n = None
            try:
                fps = self.get_avg_fps()
            except Exception:
                fps = None
            return video, n, fps

        return read

    def batch_indices(self, indices):
        # As decord's _validate_indices reads them: int64, negatives from the end.
        if isinstance(indices, collections.abc.Iterator):
            return None  # not read, lest it be consumed (decord refuses it anyway)
        a = np.array(indices, dtype=np.int64).ravel()
        a[a < 0] += len(self)
        return a.tolist()

    def checked(self, planned):
        n = len(self)
        past = [i for i in planned if not 0 <= i < n]
        if past:
            raise IndexError("planned frame %d is outside the video's %d frames" % (past[0], n))
        return planned

    def init(original):
        def __init__(self, uri, *args, **kwargs):
            original(self, uri, *args, **kwargs)
            try:
                self.__dict__["_frameaudit_video"] = video_path(uri)
            except Exception:
                pass

        return __init__

    def get_batch(original):
        def get_batch(self, indices, *args, **kwargs):
            return through(
                "decord",
                lambda: original(self, indices, *args, **kwargs),
                asked=lambda: batch_indices(self, indices),
                meta=meta(self),
                video=lambda: self.__dict__.get("_frameaudit_video"),
                steer=lambda planned: original(self, checked(self, planned), *args, **kwargs),
            )

        return get_batch

    def getitem(original):
        def __getitem__(self, idx):
            def asked():
                if isinstance(idx, slice):
                    return list(range(*idx.indices(len(self))))
                return int_list(idx, len(self))

            return through("decord", lambda: original(self, idx), asked=asked, meta=meta(self))

        return __getitem__

    def next_(original):
        def next(self, *args, **kwargs):
            # The frame next() returns is the one at decord's own position (after a fast
            # seek() to a non-key frame decord's position is the one asked for, not the
            # frame it decodes: see docs/recorder.md).
            return through(
                "decord",
                lambda: original(self, *args, **kwargs),
                asked=lambda: [int(position(self._handle))],
                meta=meta(self),
            )

        return next

    wraps_once(cls, "__init__", init)
    wraps_once(cls, "get_batch", get_batch)
    wraps_once(cls, "__getitem__", getitem)
    if position is not None:
        wraps_once(cls, "next", next_)


# --- PyAV through lmms-eval's and VLMEvalKit's helpers ---------------------------------


def _av_meta(container):
    def read(result):
        video = n = fps = None
        try:
            video = video_path(container.name)
        except Exception:
            pass
        try:
            stream = container.streams.video[0]
            n = stream.frames
            rate = stream.average_rate
            fps = float(rate) if rate is not None else None
        except Exception:
            pass
        return video, n, fps

    return read


def _stream_taken(result, asked):
    """The frames ``for i, frame in enumerate(container.decode(video=0))`` keeps when it
    takes ``i`` in set(indices) between indices[0] and indices[-1] and stops after
    indices[-1]: the sorted distinct indices in that span, as many as it returned."""
    if asked is None:
        return None
    if not asked:
        return []
    lo, hi = asked[0], asked[-1]
    kept = sorted(i for i in set(asked) if i >= 0 and lo <= i <= hi)
    return kept[: len(result)]


def _lmms_load_video(module):
    """lmms_eval.models.model_utils.load_video (lmms-eval 0.7.3).

    read_video (alias read_video_pyav), the default PyAV path, decodes through
    record_video_length_stream, or record_video_length_packet (all frames) for webm,
    mkv and when the stream path fails; load_video_packet picks from the latter.
    read_video_torchcodec goes through torchcodec's VideoDecoder (wrapped there);
    load_video_decord through decord.  read_video_dali is not recorded.
    """

    def stream(original):
        def record_video_length_stream(container, indices, *args, **kwargs):
            return through(
                "pyav",
                lambda: original(container, indices, *args, **kwargs),
                asked=lambda: int_list(indices),
                taken=_stream_taken,
                meta=_av_meta(container),
            )

        return record_video_length_stream

    def packet(original):
        def record_video_length_packet(container, *args, **kwargs):
            def call():
                frames = original(container, *args, **kwargs)
                _tls.packet = frames  # for load_video_packet, which picks from them
                return frames

            return through(
                "pyav",
                call,
                taken=lambda result, asked: list(range(len(result))),
                meta=_av_meta(container),
            )

        return record_video_length_packet

    def picked(result, asked):
        frames = getattr(_tls, "packet", None)
        _tls.packet = None
        if frames is None:
            return None
        where = {}
        for i, frame in enumerate(frames):
            where.setdefault(id(frame), i)
        return [where[id(frame)] for frame in result]

    def load_packet(original):
        def load_video_packet(container, *args, **kwargs):
            _tls.packet = None
            return through(
                "pyav",
                lambda: original(container, *args, **kwargs),
                taken=picked,
                meta=_av_meta(container),
            )

        return load_video_packet

    replace_function(module, "record_video_length_stream", stream)
    replace_function(module, "record_video_length_packet", packet)
    replace_function(module, "load_video_packet", load_packet)


def _vlmeval_video_llava(module):
    """vlmeval.vlm.video_llm.video_llava.read_video_pyav(container, indices): seek(0),
    then the same pick as lmms-eval's record_video_length_stream, stacked."""

    def make(original):
        def read_video_pyav(container, indices, *args, **kwargs):
            return through(
                "pyav",
                lambda: original(container, indices, *args, **kwargs),
                asked=lambda: int_list(indices),
                taken=_stream_taken,
                meta=_av_meta(container),
            )

        return read_video_pyav

    replace_function(module, "read_video_pyav", make)


# --- torchvision through qwen_vl_utils -------------------------------------------------


def _qwen_vision_process(module):
    """qwen_vl_utils.vision_process._read_video_torchvision: torchvision.io.read_video
    decodes the whole clip, then video[idx]; idx comes back in the metadata."""

    def make(original):
        def _read_video_torchvision(ele, *args, **kwargs):
            return through(
                "torchvision",
                lambda: original(ele, *args, **kwargs),
                taken=lambda result, asked: _qwen_taken(ele, result),
                meta=lambda result: _qwen_meta(ele, result),
            )

        return _read_video_torchvision

    replaced = replace_function(module, "_read_video_torchvision", make)
    backends = getattr(module, "VIDEO_READER_BACKENDS", None)
    if replaced and isinstance(backends, dict):
        original, wrapper = replaced
        for key, value in list(backends.items()):
            if value is original:
                backends[key] = wrapper
    if isinstance(backends, dict):
        for key, value in list(backends.items()):
            if key != "torchvision" and callable(value) and not getattr(value, "__frameaudit_wrapped__", False):
                backends[key] = _qwen_failing(key, value)
    replace_function(module, "get_video_reader_backend", lambda original: _qwen_choice(module, original))


# The pid that has logged qwen_vl_utils' reader choice: once per process (a forked child
# logs its own on its first call).
_choice_logged = {"pid": None}


def _qwen_choice(module, original):
    """get_video_reader_backend (lru_cache'd in 0.0.14): logs the reader it picks, and
    whether FORCE_QWENVL_VIDEO_READER (read when the module was imported) forced it."""

    def get_video_reader_backend(*args, **kwargs):
        reader = original(*args, **kwargs)
        if _choice_logged["pid"] != os.getpid():
            _choice_logged["pid"] = os.getpid()
            forced = getattr(module, "FORCE_QWENVL_VIDEO_READER", None) is not None
            event({"event": "reader_choice", "reader": str(reader), "forced": forced})
        return reader

    for name in ("cache_clear", "cache_info"):
        if hasattr(original, name):
            setattr(get_video_reader_backend, name, getattr(original, name))
    return get_video_reader_backend


def _qwen_failing(name, reader):
    """One of qwen_vl_utils' readers in VIDEO_READER_BACKENDS: when it raises, fetch_video
    reads the video again with torchvision; the log says which reader failed, and why."""

    def read(ele, *args, **kwargs):
        try:
            return reader(ele, *args, **kwargs)
        except Exception as err:
            video = ele.get("video") if isinstance(ele, dict) else None
            event(
                {
                    "event": "reader_failed",
                    "reader": name,
                    "video": video_path(video if isinstance(video, str) else None),
                    "error": ("%s: %s" % (type(err).__name__, err))[:500],
                }
            )
            raise

    functools.update_wrapper(read, reader)
    read.__frameaudit_wrapped__ = True
    return read


def _qwen_metadata(result):
    if isinstance(result, tuple) and len(result) >= 3 and isinstance(result[1], dict):
        return result[1]
    return None  # older qwen_vl_utils return no indices


def _qwen_taken(ele, result):
    start = ele.get("video_start") if isinstance(ele, dict) else None
    if start not in (None, 0, 0.0):
        # The indices are counted from the first frame at or after video_start.
        return None
    md = _qwen_metadata(result)
    if md is None or md.get("frames_indices") is None:
        return None
    return int_list(md["frames_indices"])


def _qwen_meta(ele, result):
    md = _qwen_metadata(result) or {}
    video = ele.get("video") if isinstance(ele, dict) else None
    return video_path(video if isinstance(video, str) else None), md.get("total_num_frames"), md.get("fps")


# --- torchcodec --------------------------------------------------------------------


def _torchcodec(module):
    """torchcodec.decoders.VideoDecoder, patched in place: the index-based methods."""
    cls = getattr(module, "VideoDecoder", None)
    if cls is None or not isinstance(cls, type):
        return

    def meta(self):
        def read(result):
            video = self.__dict__.get("_frameaudit_video")
            n = fps = None
            try:
                n = len(self)
            except Exception:
                pass
            try:
                fps = self.metadata.average_fps
            except Exception:
                pass
            return video, n, fps

        return read

    def init(original):
        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            try:
                self.__dict__["_frameaudit_video"] = video_path(_arg(args, kwargs, 0, "source"))
            except Exception:
                pass

        return __init__

    def method(name, asked_of):
        def make(original):
            def wrapper(self, *args, **kwargs):
                return through(
                    "torchcodec",
                    lambda: original(self, *args, **kwargs),
                    asked=lambda: asked_of(self, args, kwargs),
                    meta=meta(self),
                )

            return wrapper

        wraps_once(cls, name, make)

    def getitem(self, args, kwargs):
        key = args[0]
        if isinstance(key, slice):
            return list(range(*key.indices(len(self))))
        return int_list(key, len(self))

    def frame_at(self, args, kwargs):
        return int_list(_arg(args, kwargs, 0, "index"), len(self))

    def frames_at(self, args, kwargs):
        return int_list(_arg(args, kwargs, 0, "indices"), len(self))

    def frames_in_range(self, args, kwargs):
        start = _arg(args, kwargs, 0, "start")
        stop = _arg(args, kwargs, 1, "stop")
        step = _arg(args, kwargs, 2, "step", 1)
        return list(range(*slice(start, stop, step).indices(len(self))))

    wraps_once(cls, "__init__", init)
    method("__getitem__", getitem)
    method("get_frame_at", frame_at)
    method("get_frames_at", frames_at)
    method("get_frames_in_range", frames_in_range)


# The watched modules: name -> the function that wraps its readers once it has run.
PATCHES = {
    "decord.video_reader": _decord,
    "lmms_eval.models.model_utils.load_video": _lmms_load_video,
    "vlmeval.vlm.video_llm.video_llava": _vlmeval_video_llava,
    "qwen_vl_utils.vision_process": _qwen_vision_process,
    "torchcodec.decoders._video_decoder": _torchcodec,
    "torchcodec.decoders": _torchcodec,
}
