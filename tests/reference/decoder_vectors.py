#!/usr/bin/env python3
"""Writes tests/data/decoder_vectors.jsonl by RUNNING lmms-eval 0.7.3's own sampling code of the
wrappers whose frames depend on the decoder (issue 40), on the awkward videos of the issue, made
here with ffmpeg as the issue gives them (an MP4 edit list, a variable frame rate, 29.97 fps) plus
a plain 25 fps video, read by the real decoders: decord, PyAV, torchcodec and OpenCV.

Nothing here retypes a harness formula. What runs is the wheel's code:
  - gemma3: `lmms_eval.models.model_utils.load_video.read_video(path, num_frm=N)` (simple/gemma3.py
    L258), imported from the wheel by its path, once with LMMS_VIDEO_DECODE_BACKEND=pyav and once
    with torchcodec. The indices are read where the decode happens: the PyAV path's
    `record_video_length_stream` (the frames it returns: those of the indices asked, in the index
    set, below the frames that decode), torchcodec's `VideoDecoder.get_frames_at`.
  - gemma4: `Gemma4._sample_video_frames` (simple/gemma4.py, taken out of the file with `ast`) on
    the metadata transformers' `read_video_torchcodec` gives it: `VideoDecoder(path,
    seek_mode="exact").metadata.num_frames`.
  - videollama3: `read_video_custom` (simple/videollama3.py, taken out with `ast`) on the real
    `decord.VideoReader`, whose `get_batch` records the indices (use_custom_video_loader=True).
  - llava_onevision2: `Llava_OneVision2._process_video_with_timestamp` and
    `_get_video_total_frames` (chat/llava_onevision2.py, taken out with `ast`) with the real
    qwen_vl_utils `fetch_video` and cv2, under each reader qwen_vl_utils can pick (torchcodec,
    decord: FORCE_QWENVL_VIDEO_READER as qwen_vl_utils reads it); the indices are the
    `frames_indices` fetch_video returns.
  - qwen3_vl (simple class): its clamp, `nframes = min(nframes, len(decord.VideoReader(visual)))`
    (simple/qwen3_vl.py L318-320, taken out with `ast`), then the real qwen_vl_utils
    `fetch_video` under each reader.
A qwen_vl_utils reader that raises makes fetch_video fall back to torchvision; the line then
holds the reader's error (`"error"`), as the fallback is not reproduced.

And the samplers alone on a fake reader over many counts and rates (T 1..40 and up to 100000,
budgets 1..66 and more, rates 0.5 to 60), as harness_vectors.py writes its rule lines.

Lines:
  {"rule": <FrameRule JSON>, "video": {"num_frames": T, "fps": F, "bound": null},
   "indices": [...] | "error": "...", "source": "..."}
  {"wrapper": id, "model_args": "k=v,...", "env": {VAR: value}, "decoder": "pyav" | "torchcodec"
   | "decord", "video": name, "counts": {decoder: {"num_frames", "fps", "decodable"?}},
   "indices": [...] | "error": "..."}
`counts` is each decoder's count and rate of the video as `items.jsonl` → `decoders` stores it
(decord: len / get_avg_fps; torchcodec: exact-mode metadata; pyav: the stream header's frames and
average_rate, `decodable` when fewer frames decode; cv2: CAP_PROP_FRAME_COUNT / CAP_PROP_FPS).

Run (Python 3.11):
    pip install decord av opencv-python-headless torch torchcodec numpy pillow
    pip install --no-deps qwen-vl-utils==0.0.14 torchvision; pip install packaging requests
    pip download --no-deps lmms-eval==0.7.3 && unzip lmms_eval-0.7.3-py3-none-any.whl -d $LMMS_073
    LMMS_073=/path/to/unpacked/wheel python3 tests/reference/decoder_vectors.py
ffmpeg with libx264 is needed for the videos. Made with decord 0.6.0, PyAV 18.1.0, torchcodec
0.17.0 on torch 2.15.0, opencv-python-headless 5.1.0, qwen-vl-utils 0.0.14, ffmpeg 5.1.
"""

import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import types
from pathlib import Path

import numpy as np

LMMS = Path(os.environ.get("LMMS_073", "/work/ref/lmms_all/0.7.3"))
REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "decoder_vectors.jsonl"
BUDGETS = (8, 16, 32, 64)


def make_videos(d):
    """The issue's videos, 32x32, and a plain one."""
    x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2"]

    def ff(*args):
        subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)

    lavfi = lambda rate: f"testsrc2=size=32x32:rate={rate}"  # noqa: E731
    ff("-f", "lavfi", "-i", lavfi(25), "-frames:v", "1100", *x264, "-g", "50", f"{d}/src.mp4")
    ff("-ss", "3.3", "-i", f"{d}/src.mp4", "-c", "copy", f"{d}/edl.mp4")
    ff("-f", "lavfi", "-i", lavfi(30), "-frames:v", "802", "-vf",
       "setpts='if(lt(N,600),N/30,20+(N-600)/5)/TB'", "-fps_mode", "vfr", *x264, f"{d}/vfr.mp4")
    ff("-f", "lavfi", "-i", lavfi("30000/1001"), "-frames:v", "1796", *x264, f"{d}/ntsc.mp4")
    ff("-f", "lavfi", "-i", lavfi(25), "-frames:v", "1000", *x264, f"{d}/normal.mp4")
    return {v: f"{d}/{v}.mp4" for v in ("edl", "vfr", "ntsc", "normal")}


def counts(path):
    import av
    import cv2
    import decord
    from torchcodec.decoders import VideoDecoder

    vr = decord.VideoReader(path, num_threads=1)
    out = {"decord": {"num_frames": len(vr), "fps": float(vr.get_avg_fps())}}
    m = VideoDecoder(path).metadata
    out["torchcodec"] = {"num_frames": int(m.num_frames), "fps": float(m.average_fps)}
    with av.open(path) as c:
        s = c.streams.video[0]
        header = {"num_frames": int(s.frames), "fps": float(s.average_rate)}
        decoded = sum(1 for _ in c.decode(s))
    if decoded < header["num_frames"]:
        header["decodable"] = decoded
    out["pyav"] = header
    cap = cv2.VideoCapture(path)
    out["cv2"] = {"num_frames": int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), "fps": float(cap.get(cv2.CAP_PROP_FPS))}
    cap.release()
    return out


def wheel_def(relpath, name, namespace):
    """Runs the definition of `name` (a function, or a method of a class) from the wheel's
    file in `namespace`, and returns it."""
    src = (LMMS / relpath).read_text()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            exec(textwrap.dedent(ast.get_source_segment(src, node)), namespace)
            return namespace[name]
    raise KeyError(f"{name} in {relpath}")


def load_module(relpath, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, LMMS / relpath)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- the wrappers ---------------------------------------------------------------------


def gemma3(videos, emit):
    """read_video(visual, num_frm=self.max_num_frames) under each LMMS_VIDEO_DECODE_BACKEND."""
    from torchcodec.decoders import VideoDecoder

    lv = load_module("lmms_eval/models/model_utils/load_video.py", "lmms_load_video")
    seen = {}
    stream = lv.record_video_length_stream

    def record(container, indices, *a, **k):
        frames = stream(container, indices, *a, **k)
        asked = [int(i) for i in indices]
        # The frames it returns are those of the distinct indices asked, in order, up to the
        # last that decodes (docs/recorder.md): as many as it returned.
        seen["indices"] = sorted(set(asked))[: len(frames)]
        return frames

    lv.record_video_length_stream = record
    frames_at = VideoDecoder.get_frames_at

    def get_frames_at(self, indices, *a, **k):
        seen["indices"] = [int(i) for i in indices]
        return frames_at(self, indices, *a, **k)

    VideoDecoder.get_frames_at = get_frames_at
    try:
        for backend in ("pyav", "torchcodec"):
            os.environ["LMMS_VIDEO_DECODE_BACKEND"] = backend
            for v, path in videos.items():
                for n in BUDGETS:
                    seen.clear()
                    try:
                        out = lv.read_video(path, num_frm=n)
                        assert len(out) == len(seen["indices"]), (len(out), seen)
                        res = {"indices": seen["indices"]}
                    except Exception as e:  # noqa: BLE001
                        res = {"error": f"{type(e).__name__}: {e}"}
                    emit("gemma3", f"max_num_frames={n}", {"LMMS_VIDEO_DECODE_BACKEND": backend}, backend, v, res)
    finally:
        os.environ.pop("LMMS_VIDEO_DECODE_BACKEND", None)
        VideoDecoder.get_frames_at = frames_at


def gemma4(videos, emit):
    from torchcodec.decoders import VideoDecoder

    sample = wheel_def("lmms_eval/models/simple/gemma4.py", "_sample_video_frames", {"np": np})
    for v, path in videos.items():
        # transformers' read_video_torchcodec: VideoDecoder(seek_mode="exact"), total_num_frames
        # = metadata.num_frames; the processor passes num_frames=self.max_num_frames.
        total = VideoDecoder(path, seek_mode="exact").metadata.num_frames
        for n in BUDGETS:
            me = types.SimpleNamespace(max_num_frames=n)
            idx = sample(me, types.SimpleNamespace(total_num_frames=total), num_frames=n)
            emit("gemma4", f"max_num_frames={n}", {}, "torchcodec", v, {"indices": [int(i) for i in idx]})


def videollama3(videos, emit):
    import decord

    seen = {}

    class Recording(decord.VideoReader):
        def get_batch(self, indices):
            seen["indices"] = [int(i) for i in indices]
            return super().get_batch(indices)

    read = wheel_def(
        "lmms_eval/models/simple/videollama3.py",
        "read_video_custom",
        {"np": np, "VideoReader": Recording, "cpu": decord.cpu},
    )
    for v, path in videos.items():
        seen.clear()
        frames, timestamps = read(path)
        assert len(frames) == len(seen["indices"]) == len(timestamps)
        for n in BUDGETS:
            # The wrapper calls read_video_custom(visual): max_num_frames is not passed.
            emit("videollama3", f"max_num_frames={n},use_custom_video_loader=True", {}, "decord", v,
                 {"indices": seen["indices"]})


def qwen_readers():
    """qwen_vl_utils' vision_process, and a function that makes it pick `reader` as
    FORCE_QWENVL_VIDEO_READER does (the module reads the variable when it is imported)."""
    import qwen_vl_utils.vision_process as vp

    def pick(reader):
        vp.FORCE_QWENVL_VIDEO_READER = reader
        vp.get_video_reader_backend.cache_clear()

    def no_fallback(ele):
        raise RuntimeError("fell back to torchvision")

    vp.VIDEO_READER_BACKENDS["torchvision"] = no_fallback
    return vp, pick


def fetch(vp, ele):
    """What fetch_video gets from the reader qwen_vl_utils picked: (result, {"indices"}), or
    (None, {"error"}) when the reader raises (fetch_video would then fall back to torchvision,
    which is not reproduced). The resizing fetch_video does next keeps the frames."""
    reader = vp.VIDEO_READER_BACKENDS[vp.get_video_reader_backend()]
    try:
        result = reader(dict(ele))
    except Exception as e:  # noqa: BLE001
        return None, {"error": f"{type(e).__name__}: {e}"}
    idx = result[1]["frames_indices"]
    return result, {"indices": [int(i) for i in (idx.tolist() if hasattr(idx, "tolist") else idx)]}


def llava_onevision2(videos, emit):
    import cv2
    from PIL import Image

    vp, pick = qwen_readers()
    got = {}

    def fetch_video(ele, return_video_metadata=False):
        result, res = fetch(vp, ele)
        got.update(res)
        if result is None:
            raise RuntimeError(res["error"])
        return (result[0], result[1]) if return_video_metadata else result[0]

    ns = {"np": np, "Image": Image, "cv2": cv2, "fetch_video": fetch_video}
    process = wheel_def("lmms_eval/models/chat/llava_onevision2.py", "_process_video_with_timestamp", ns)
    total = wheel_def("lmms_eval/models/chat/llava_onevision2.py", "_get_video_total_frames", ns)
    for reader in ("torchcodec", "decord"):
        pick(reader)
        for v, path in videos.items():
            # 1040 on the edit list: between torchcodec's count (1017) and cv2's (1050).
            for n in BUDGETS + ((1040,) if v == "edl" else ()):
                for fixed in (False, True):
                    # The constructor's own conversions and defaults (fps=1.0, min/max_pixels).
                    me = types.SimpleNamespace(
                        use_codec=False, max_pixels=1605632, min_pixels=256 * 28 * 28, max_num_frames=n,
                        fixed_num_frames=n if fixed else None, fps=1.0, timestamp_decimals=1,
                    )
                    me._get_video_total_frames = lambda url, me=me: total(me, url)
                    got.clear()
                    try:
                        process(me, path)
                    except RuntimeError:
                        pass
                    args = f"fixed_num_frames={n}" if fixed else f"max_num_frames={n}"
                    emit("llava_onevision2", args, {"FORCE_QWENVL_VIDEO_READER": reader}, reader, v, dict(got))


def qwen3_vl(videos, emit):
    import decord

    vp, pick = qwen_readers()
    # simple/qwen3_vl.py generate_until: the clamp, as the wrapper writes it.
    src = (LMMS / "lmms_eval/models/simple/qwen3_vl.py").read_text()
    clamp = 'per_video_kwargs["nframes"] = min(per_video_kwargs["nframes"], len(vr))'
    assert clamp in src and "vr = decord.VideoReader(visual)" in src
    for reader in ("torchcodec", "decord"):
        pick(reader)
        for v, path in videos.items():
            # 1040 on the edit list: between torchcodec's count (1017) and decord's (1050).
            for n in BUDGETS + ((1040,) if v == "edl" else ()):
                ns = {"per_video_kwargs": {"nframes": n}, "decord": decord, "visual": path}
                exec("vr = decord.VideoReader(visual)\n" + clamp, ns)
                _, res = fetch(vp, {"video": path, **ns["per_video_kwargs"]})
                emit("qwen3_vl", f"max_num_frames={n}", {"FORCE_QWENVL_VIDEO_READER": reader}, reader, v, res)


def rule_lines(emit_rule):
    """The samplers on a fake reader, over many counts and rates (as harness_vectors.py does):
    gemma4's `_sample_video_frames` and lmms-eval's torchcodec path (`_compute_sample_count`,
    `_compute_uniform_indices`) give `linspace_up_to`; videollama3's `read_video_custom` with a
    VideoReader that reports T and the rate gives `fps_middles`."""
    sample = wheel_def("lmms_eval/models/simple/gemma4.py", "_sample_video_frames", {"np": np})
    lv = load_module("lmms_eval/models/model_utils/load_video.py", "lmms_load_video")
    for t in list(range(1, 41)) + [299, 1000, 1017, 1050, 100000]:
        for n in list(range(1, 67)) + [96, 128, 256]:
            idx = sample(types.SimpleNamespace(max_num_frames=n), types.SimpleNamespace(total_num_frames=t), num_frames=n)
            tc = lv._compute_uniform_indices(t, lv._compute_sample_count(t, n, None, 25.0))
            assert tc.tolist() == idx.tolist(), (t, n)
            emit_rule({"kind": "linspace_up_to", "n": n}, t, 25.0, {"indices": [int(i) for i in idx]},
                      "gemma4 _sample_video_frames; load_video torchcodec path")

    class FakeReader:
        def __init__(self, path, ctx=None):
            self.t, self.fps = FAKE["video"]

        def __len__(self):
            return self.t

        def get_avg_fps(self):
            return self.fps

        def get_batch(self, ids):
            FAKE["ids"] = [int(i) for i in ids]
            return types.SimpleNamespace(asnumpy=lambda: list(ids))

    FAKE = {}
    read = wheel_def("lmms_eval/models/simple/videollama3.py", "read_video_custom",
                     {"np": np, "VideoReader": FakeReader, "cpu": lambda i: None})
    rates = (0.5, 0.9, 1.0, 1.5, 2.0, 10.0, 23.976, 24.0, 25.0, 29.97, 30.0, 59.94, 60.0)
    for t in list(range(1, 41)) + [179, 180, 181, 299, 1000, 1796, 4499, 4500, 4501, 5000, 100000]:
        for fps in rates:
            FAKE.update(video=(t, fps), ids=None)
            try:
                read("v.mp4")
                res = {"indices": FAKE["ids"]}
            except Exception as e:  # noqa: BLE001
                res = {"error": f"{type(e).__name__}: {e}"}
            emit_rule({"kind": "fps_middles", "rate": 1.0, "max_frames": 180}, t, fps, res,
                      "videollama3 read_video_custom")


def main():
    if not (LMMS / "lmms_eval/models/model_utils/load_video.py").exists():
        sys.exit(f"no lmms-eval 0.7.3 wheel unpacked at {LMMS} (set LMMS_073)")
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    lines = []
    with tempfile.TemporaryDirectory() as d:
        videos = make_videos(d)
        measured = {v: counts(p) for v, p in videos.items()}

        def emit(wrapper, args, env, decoder, video, result):
            lines.append({"wrapper": wrapper, "model_args": args, "env": env, "decoder": decoder, "video": video,
                          "counts": measured[video], **result})

        for make in (gemma3, gemma4, videollama3, llava_onevision2, qwen3_vl):
            make(videos, emit)

    def emit_rule(rule, t, fps, result, source):
        lines.append({"rule": rule, "video": {"num_frames": t, "fps": fps, "bound": None}, **result, "source": source})

    rule_lines(emit_rule)
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    print(f"{len(lines)} lines to {out}")


if __name__ == "__main__":
    main()
