#!/usr/bin/env python3
"""Writes tests/data/harness_vectors.jsonl by RUNNING the harnesses' own sampling code, and
src/core/rules/vlmevalkit_models.rs (VLMEvalKit's model names, classes and VIDEO_LLM flags,
read from vlmeval/config.py and the model classes with `ast`).

Nothing here retypes a harness formula. Functions and methods are taken from the harness
files with `ast` at run time and executed with stubs: a fake `decord.VideoReader` that reports
the video's frame count and average fps and records the indices it is asked for (its frames
carry their own index as pixel values, so a later pick among decoded frames is read back from
the tensor the harness hands its processor), stub processors/models that stop the harness at
the model call, and stub `self` objects with the attributes each method reads. qwen_vl_utils
is imported as it is (with the fake decord and an identity resize).

Each line: {"rule": <FrameRule JSON as dataset.json stores it>, "video": {"num_frames": T,
"fps": F, "bound": [s, e] | null}, "indices": [...]} or "error": "..." where the harness
raises, plus "source": the harness code that produced it.

Run (Python 3.11):
    pip install torch==2.15.0 torchvision==0.29.2 numpy pillow pydantic packaging requests
    python3 tests/reference/harness_vectors.py
with the harness sources at (override with the environment variables):
    LMMS_EVAL_DIR=/work/ref/lmms_eval      (lmms-eval 0.7.3 wheel, unpacked)
    LMMS_OLD_DIR=/work/ref/lmms_old        (x0.3.5, x0.4.0, x0.5.0: older wheels, unpacked)
    QWEN_VL_UTILS_DIR=/work/ref/qwen_vl_utils   (qwen_vl_utils 0.0.14)
    VLMEVALKIT_DIR=/work/ref/vlmevalkit    (VLMEvalKit at e8e78f05)
torch's float32 linspace depends on the CPU kernel: the file is made on an AVX2 machine
(rules with "linspace": "fma"); the script re-runs itself with ATEN_CPU_CAPABILITY=default for
the "plain" vectors (--plain-only).
"""

import ast
import functools
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

LMMS = Path(os.environ.get("LMMS_EVAL_DIR", "/work/ref/lmms_eval"))
LMMS_OLD = Path(os.environ.get("LMMS_OLD_DIR", "/work/ref/lmms_old"))
QWEN = Path(os.environ.get("QWEN_VL_UTILS_DIR", "/work/ref/qwen_vl_utils"))
VLMKIT = Path(os.environ.get("VLMEVALKIT_DIR", "/work/ref/vlmevalkit"))
REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "harness_vectors.jsonl"
MODELS_RS = REPO / "src" / "core" / "rules" / "vlmevalkit_models.rs"

# ---------------------------------------------------------------------------------------
# The fake decord.
VIDEOS = {}  # path -> (T, fps)
LOG = []  # index lists the reader was asked for


class FakeArray:
    def __init__(self, idx):
        self.idx = list(idx)

    def asnumpy(self):
        a = np.array(self.idx, dtype=np.float32).reshape(-1, 1, 1, 1)
        return np.broadcast_to(a, (len(self.idx), 2, 2, 3)).copy()


class FakeFrame:
    def __init__(self, i):
        self.i = i

    def asnumpy(self):
        return np.full((2, 2, 3), self.i, dtype=np.float32)


class VideoReader:
    def __init__(self, path, ctx=None, num_threads=0, **kw):
        if isinstance(path, (list, tuple)):
            path = path[0]
        self.t, self.fps = VIDEOS[path]
        if self.t == 0:
            raise RuntimeError("decord: the video has no frames")

    def __len__(self):
        return self.t

    def get_avg_fps(self):
        return self.fps

    def get_batch(self, idx):
        idx = [int(i) for i in idx]
        for i in idx:
            if not -self.t <= i < self.t:
                raise IndexError(f"decord: index {i} out of range")
        LOG.append(("batch", idx))
        return FakeArray(idx)

    def __getitem__(self, i):
        i = int(i)
        if not -self.t <= i < self.t:
            raise IndexError(f"decord: index {i} out of range")
        LOG.append(("item", i))
        return FakeFrame(i)


decord = types.ModuleType("decord")
decord.VideoReader = VideoReader
decord.cpu = lambda *a, **k: None
sys.modules["decord"] = decord


def video(t, fps):
    path = f"/videos/T{t}_F{fps}.mp4"
    VIDEOS[path] = (t, fps)
    return path


# ---------------------------------------------------------------------------------------
# qwen_vl_utils as it is, reading through the fake decord; the resize does not touch indices.
os.environ["FORCE_QWENVL_VIDEO_READER"] = "decord"
sys.path.insert(0, str(QWEN))
import torch  # noqa: E402
import qwen_vl_utils.vision_process as qvp  # noqa: E402

qvp.logger.disabled = True
qvp.transforms = types.SimpleNamespace(
    functional=types.SimpleNamespace(resize=lambda v, size, **kw: v)
)


def _no_torchvision(ele):
    # qwen_vl_utils retries a failed decord read with torchvision; the fake videos have no
    # file, so the retry reports the same condition the decord path raised.
    raise RuntimeError("torchvision fallback")


qvp.VIDEO_READER_BACKENDS["torchvision"] = _no_torchvision
_orig_decord = qvp._read_video_decord


def _decord_keep_error(ele):
    try:
        return _orig_decord(ele)
    except Exception as e:  # remembered so the vector names the harness's own condition
        LAST_ERROR[0] = str(e)
        raise


LAST_ERROR = [None]
qvp.VIDEO_READER_BACKENDS["decord"] = _decord_keep_error


# ---------------------------------------------------------------------------------------
# ast extraction.
@functools.lru_cache(maxsize=None)
def source_of(path, *names):
    """The source of `names` (functions, classes, or Class.method) in the file at `path`."""
    tree = ast.parse(Path(path).read_text())
    out = []
    for name in names:
        cls, _, meth = name.partition(".")
        for node in tree.body:
            if isinstance(node, ast.Assign) and not meth and any(
                isinstance(x, ast.Name) and x.id == cls for x in node.targets
            ):
                out.append(ast.unparse(node))
                break
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == cls:
                if not meth:
                    out.append(ast.unparse(node))
                else:
                    for sub in node.body:
                        if isinstance(sub, ast.FunctionDef) and sub.name == meth:
                            out.append(ast.unparse(sub))
                break
        else:
            raise KeyError(f"{name} not in {path}")
    return "\n\n".join(out)


def load(path, name, env):
    ns = dict(env)
    exec(compile(source_of(str(path), name), f"{path}:{name}", "exec"), ns)
    return ns[name.split(".")[-1]]


class Stop(Exception):
    pass


class Anything:
    """Accepts any attribute, call, iteration: the parts of a harness that do not sample."""

    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        return Anything()

    def __call__(self, *a, **k):
        return Anything()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False


class Collator:
    def __init__(self, arr, *a, **k):
        self.arr = list(arr)

    def get_batched(self, n=1, batch_fn=None):
        for x in self.arr:
            yield [x]

    def get_original(self, x):
        return x


def frames_of(tensor):
    # The fake frames carry their own index in every pixel.
    t = tensor.reshape(tensor.shape[0], -1)[:, 0]
    return [int(round(float(v))) for v in t]


class Processor:
    """Stops the harness where it hands the frames to the model, keeping them."""

    def __init__(self):
        self.tokenizer = Anything()

    def apply_chat_template(self, *a, **k):
        return ["text"]

    def __call__(self, *a, videos=None, **k):
        CAPTURED[0] = frames_of(videos[0]) if videos is not None else None
        raise Stop()

    def batch_decode(self, *a, **k):
        return []


CAPTURED = [None]

_pkg = types.ModuleType("lmms_eval")
_pkg.__path__ = []
_pkg.utils = types.ModuleType("lmms_eval.utils")
_pkg.utils.Collator = Collator
sys.modules.setdefault("lmms_eval", _pkg)
sys.modules.setdefault("lmms_eval.utils", _pkg.utils)

# protocol.py's message classes, executed from the file (pydantic models).
from pydantic import BaseModel  # noqa: E402
from typing import Any, Dict, List, Literal, Optional, Tuple, Union  # noqa: E402,F401

PROTO_ENV = dict(
    BaseModel=BaseModel, Any=Any, Dict=Dict, List=List, Literal=Literal, Optional=Optional,
    Tuple=Tuple, Union=Union, np=np, os=os, Image=__import__("PIL.Image").Image,
)
exec(
    compile(
        source_of(
            LMMS / "lmms_eval/protocol.py",
            "ChatTextContent", "ChatImageContent", "ChatVideoContent", "ChatAudioContent",
            "ChatContent", "ChatMessage", "ChatMessages",
        ),
        "protocol.py",
        "exec",
    ),
    PROTO_ENV,
)
ChatMessages = PROTO_ENV["ChatMessages"]


def run_generate(path, method, attrs, chat, vpath):
    """Run `Class.generate_until` of a wrapper file on one request for `vpath`."""
    from PIL import Image

    env = dict(
        np=np, torch=torch, decord=decord, VideoReader=VideoReader, cpu=decord.cpu,
        process_vision_info=qvp.process_vision_info, utils=types.SimpleNamespace(Collator=Collator),
        tqdm=Anything, eval_logger=Anything(), ChatMessages=ChatMessages, Image=Image,
        re=__import__("re"), time=__import__("time"), log_metrics=Anything(),
        GenerationResult=Anything, TokenCounts=Anything, Instance=object, List=List,
        Optional=Optional, Union=Union, Tuple=Tuple, _is_video_path=lambda v: isinstance(v, str)
        and v.endswith(".mp4"), ThreadPoolExecutor=__import__("concurrent.futures").futures.ThreadPoolExecutor,
    )
    cls = path.split("/")[-1]
    f = load(path, method, env)
    self = types.SimpleNamespace(
        batch_size=1, rank=0, processor=Processor(), tokenizer=Anything(), system_prompt="s",
        reasoning_prompt=None, interleave_visuals=False, image_first=True, device="cpu",
        device_map="cpu", cache_hook=Anything(), model=Anything(), use_cache=True,
        eot_token_id=0, flatten=lambda x: [j for i in x for j in i], enable_thinking=None,
        DEFAULT_GEN_KWARGS={}, **attrs,
    )
    doc = {"video": vpath}
    self.task_dict = {"task": {"test": [doc]}}
    if chat:
        msgs = lambda d: [  # noqa: E731
            {"role": "user", "content": [{"type": "video", "url": d["video"]}, {"type": "text", "text": "q"}]}
        ]
        args = ("ctx", msgs, {}, 0, "task", "test")
    else:
        args = ("ctx", {}, lambda d: [d["video"]], 0, "task", "test")
    req = types.SimpleNamespace(args=args, metadata={})
    # qwen3_vl's simple class builds its inputs in _preprocess_chunk, its kwargs in
    # _build_video_kwargs: bind them from the same file.
    for helper in ("_build_video_kwargs", "_preprocess_chunk", "_apply_chat_template"):
        for p in (path, path.replace("/chat/", "/simple/")):
            try:
                setattr(self, helper, types.MethodType(load(p, f"{method.split('.')[0]}.{helper}", env), self))
                break
            except KeyError:
                pass
    CAPTURED[0] = None
    LAST_ERROR[0] = None
    try:
        f(self, [req])
    except Stop:
        return CAPTURED[0], None
    except Exception as e:
        return None, LAST_ERROR[0] or f"{type(e).__name__}: {e}"
    return None, LAST_ERROR[0] or "the harness did not reach the model"


# ---------------------------------------------------------------------------------------
LINES = []


BIG = {}


def emit(rule, t, fps, bound, indices, error, source):
    # Long index lists are kept for a few cases of each source: they would make the file huge.
    if indices is not None and len(indices) > 100:
        key = (source, rule.get("linspace"))
        BIG[key] = BIG.get(key, 0) + 1
        if BIG[key] > 5:
            return
    line = {"rule": rule, "video": {"num_frames": t, "fps": fps, "bound": bound}}
    if error is not None:
        line["error"] = error
    else:
        line["indices"] = [int(i) for i in indices]
    line["source"] = source.replace("lmms-eval ", "lmms-eval:").replace("VLMEvalKit ", "vlmevalkit:").replace(
        "models/", "").replace("vlmeval/", "").replace("lmms_eval/", "")
    LINES.append(line)


def grid_cases(dense=False):
    ts = list(range(1, 41)) + [100, 150, 720, 1350, 1800, 2500, 5400, 18000, 100000]
    fpss = [24.0, 25.0, 29.97, 30.0, 59.94, 1.0, 0.5, 7.3]
    ns = list(range(1, 67)) + [96, 128, 256]
    for t in ts:
        for fps in fpss:
            for n in ns:
                yield t, fps, n


def sampled(cases, keep):
    # Every T, every fps and every N appear; the full product is thinned by a fixed stride.
    out = []
    for k, c in enumerate(cases):
        t, fps, n = c
        if keep(k, t, fps, n):
            out.append(c)
    return out


def thin(k, t, fps, n):
    edge = t <= 3 or n <= 3 or n in (96, 128, 256) or t in (1800, 2500, 1350, 720)
    return edge and k % 7 == 0 or k % 31 == 0


def thin_mid(k, t, fps, n):
    edge = t <= 3 or n <= 3 or n in (96, 128, 256) or t in (1800, 2500, 1350, 720, 100000)
    return edge and k % 23 == 0 or k % 97 == 0


def thin_more(k, t, fps, n):
    edge = t <= 3 or n <= 3 or n in (96, 256) or t in (1800, 2500)
    return edge and k % 41 == 0 or k % 173 == 0


LMMS_FILES = {
    "0.7.3": LMMS / "lmms_eval/models",
    "0.5.0": LMMS_OLD / "x0.5.0/lmms_eval/models",
    "0.4.0": LMMS_OLD / "x0.4.0/lmms_eval/models",
    "0.3.5": LMMS_OLD / "x0.3.5/lmms_eval/models",
}


def lmms_qwen_cases(plain):
    """lmms-eval qwen-family wrappers through generate_until (qwen_vl_utils inside)."""
    lin = "plain" if plain else "fma"
    m = LMMS_FILES["0.7.3"]
    specs = []
    # (file, class.method, chat?, attrs(n), rule(n))
    specs.append((m / "chat/qwen2_5_vl.py", "Qwen2_5_VL.generate_until", True,
                  lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_nframes", "n": n, "cap": "even_min2", "linspace": lin}))
    specs.append((m / "simple/qwen2_5_vl.py", "Qwen2_5_VL.generate_until", False,
                  lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_fps", "fps": 2.0, "linspace": lin, "resample": {"n": n, "mode": "unique_last"}}))
    specs.append((m / "chat/qwen3_vl.py", "Qwen3_VL.generate_until", True,
                  lambda n: dict(max_num_frames=n, fps=None, total_pixels=None, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_nframes", "n": n, "cap": "none", "linspace": lin}))
    specs.append((m / "simple/qwen3_vl.py", "Qwen3_VL.generate_until", False,
                  lambda n: dict(max_num_frames=n, fps=None, total_pixels=None, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_nframes", "n": n, "cap": "total", "linspace": lin}))
    specs.append((m / "simple/qwen2_vl.py", "Qwen2_VL.generate_until", False,
                  lambda n: dict(max_num_frames=n, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_fps", "fps": 2.0, "linspace": lin, "resample": {"n": n, "mode": "unique"}}))
    specs.append((m / "chat/llava_onevision1_5.py", "Llava_OneVision1_5.generate_until", True,
                  lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_nframes", "n": n, "cap": "none", "linspace": lin, "resample": {"n": n, "mode": "append_last"}}))
    specs.append((m / "simple/llava_onevision1_5.py", "Llava_OneVision1_5.generate_until", False,
                  lambda n: dict(max_num_frames=n, max_pixels=1, min_pixels=1),
                  lambda n: {"kind": "qwen_fps", "fps": 2.0, "linspace": lin, "resample": {"n": n, "mode": "append_last"}}))
    if not plain:
        o5, o4, o3 = LMMS_FILES["0.5.0"], LMMS_FILES["0.4.0"], LMMS_FILES["0.3.5"]
        specs.append((o5 / "chat/qwen2_5_vl.py", "Qwen2_5_VL.generate_until", True,
                      lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1),
                      lambda n: {"kind": "qwen_nframes", "n": n, "cap": "none", "linspace": lin, "resample": {"n": n, "mode": "append_last"}}))
        specs.append((o4 / "chat/qwen2_5_vl.py", "Qwen2_5_VL.generate_until", True,
                      lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1),
                      lambda n: {"kind": "qwen_fps", "fps": 2.0, "linspace": lin, "resample": {"n": n, "mode": "append_last"}}))
        specs.append((o3 / "qwen2_5_vl.py", "Qwen2_5_VL.generate_until", False,
                      lambda n: dict(max_num_frames=n, fps=None, max_pixels=1, min_pixels=1, use_custom_video_loader=False, max_image_size=None),
                      lambda n: {"kind": "qwen_fps", "fps": 2.0, "linspace": lin, "resample": {"n": n, "mode": "append_last"}}))
    # fps arguments of the chat classes
    fps_specs = [
        (m / "chat/qwen2_5_vl.py", "Qwen2_5_VL.generate_until",
         lambda n, f: dict(max_num_frames=n, fps=f, max_pixels=1, min_pixels=1),
         lambda n, f: {"kind": "qwen_fps", "fps": f, "linspace": lin}),
        (m / "chat/qwen3_vl.py", "Qwen3_VL.generate_until",
         lambda n, f: dict(max_num_frames=n, fps=f, total_pixels=None, max_pixels=1, min_pixels=1),
         lambda n, f: {"kind": "qwen_fps", "fps": f, "max_frames": n, "linspace": lin}),
    ]
    cases = sampled(grid_cases(), thin_more)
    for path, meth, chat, attrs, rule in specs:
        src = f"lmms-eval {path.relative_to(path.parents[2] if 'x0' in str(path) else LMMS)}:{meth}"
        for t, fps, n in cases:
            if t > 20000 and n > 128:
                continue
            got, err = run_generate(str(path), meth, attrs(n), chat, video(t, fps))
            emit(rule(n), t, fps, None, got, err, src)
    for path, meth, attrs, rule in fps_specs:
        src = f"lmms-eval {path.relative_to(LMMS)}:{meth}"
        for t, fps, n in cases[::4]:
            for f in (0.5, 1.0, 2.0):
                got, err = run_generate(str(path), meth, attrs(n, f), True, video(t, fps))
                emit(rule(n, f), t, fps, None, got, err, src)


def linspace_grid(plain):
    """torch.linspace(0, T-1, n).round() itself, over a large grid, via qwen_vl_utils nframes."""
    lin = "plain" if plain else "fma"
    for t in list(range(2, 160)) + [719, 720, 1349, 1350, 1799, 1800, 2499, 2500, 5400, 18000, 100000]:
        for n in range(2, min(t, 400) + 1, 2):
            if (t * 7 + n) % (13 if t > 100 else 5) and n > 12:
                continue
            LAST_ERROR[0] = None
            try:
                _, meta = qvp.fetch_video({"video": video(t, 30.0), "nframes": n}, return_video_metadata=True)
                got, err = meta["frames_indices"], None
            except Exception as e:
                got, err = None, LAST_ERROR[0] or str(e)
            emit({"kind": "qwen_nframes", "n": n, "cap": "none", "linspace": lin}, t, 30.0, None, got, err,
                 "qwen_vl_utils 0.0.14 fetch_video (nframes)")


def llava_cases():
    m = LMMS_FILES["0.7.3"]
    lv = load(m / "simple/llava_vid.py", "LlavaVid.load_video", dict(np=np, VideoReader=VideoReader, cpu=decord.cpu))
    vk = load(VLMKIT / "vlmeval/vlm/llava/llava.py", "LLaVA_OneVision.load_video", dict(np=np))
    for t, fps, n in sampled(grid_cases(), thin_mid) + [(t, f, 0) for t in (1, 100) for f in (30.0,)]:
        for rate in (1, 2):
            for force in (False, True):
                for f, src in ((lv, "lmms-eval models/simple/llava_vid.py:LlavaVid.load_video"),
                               (vk, "VLMEvalKit vlmeval/vlm/llava/llava.py:LLaVA_OneVision.load_video")):
                    if src.startswith("VLMEvalKit") and rate != 1:
                        continue
                    LOG.clear()
                    try:
                        f(None, video(t, fps), n, rate, force_sample=force)
                        got, err = (LOG[-1][1] if LOG else []), None
                    except Exception as e:
                        got, err = None, f"{type(e).__name__}: {e}"
                    emit({"kind": "llava_stride", "n": n, "rate": float(rate), "force_sample": force}, t, fps, None, got, err, src)


def get_index_cases():
    m = LMMS_FILES["0.7.3"]
    import numpy.typing as npt

    gi3 = load(m / "simple/internvl3.py", "get_index", dict(np=np, Optional=Optional, Tuple=Tuple, npt=npt))
    gi2 = load(m / "simple/internvl2.py", "get_index", dict(np=np))
    mvb = load(VLMKIT / "vlmeval/dataset/mvbench.py", "MVBench.get_index", dict(np=np))
    for t, fps, n in sampled(grid_cases(), thin_mid):
        for f, src in ((gi3, "lmms-eval models/simple/internvl3.py:get_index"), (gi2, "lmms-eval models/simple/internvl2.py:get_index")):
            if src.endswith("internvl2.py:get_index") and n % 5:
                continue
            try:
                got, err = f(None, float(fps), t - 1, first_idx=0, num_segments=n).tolist(), None
                if any(i < 0 or i >= t for i in got):
                    got, err = None, "index outside the video"
            except Exception as e:
                got, err = None, f"{type(e).__name__}: {e}"
            emit({"kind": "get_index", "n": n, "bounded": False}, t, fps, None, got, err, src)
    # MVBench with the question's window
    bounds = [(0.0, 1.0), (0.5, 2.5), (1.0, 5.0), (2.3, 4.7), (0.0, 1e9), (3.0, 3.2), (10.0, 20.0), (7.0, 8.0)]
    for t in (30, 100, 150, 720, 1350):
        for fps in (24.0, 29.97, 30.0, 7.3):
            for n in (1, 2, 4, 8, 16, 32):
                for b in bounds:
                    selfo = types.SimpleNamespace(num_segments=n)
                    try:
                        got, err = mvb(selfo, b, float(fps), t - 1, first_idx=0).tolist(), None
                        if any(i < 0 or i >= t for i in got):
                            got, err = None, "index outside the video"
                    except Exception as e:
                        got, err = None, f"{type(e).__name__}: {e}"
                    emit({"kind": "get_index", "n": n, "bounded": True}, t, fps, list(b), got, err,
                         "VLMEvalKit vlmeval/dataset/mvbench.py:MVBench.get_index")


class FakePath:
    """os.path whose frames already exist, so the dataset samplers return without writing."""

    join = staticmethod(os.path.join)
    splitext = staticmethod(os.path.splitext)

    @staticmethod
    def exists(p):
        return True


def vlm_dataset_cases():
    base = VLMKIT / "vlmeval/dataset/video_base.py"
    fake_os = types.SimpleNamespace(makedirs=lambda *a, **k: None, path=FakePath)
    env = dict(np=np, osp=FakePath, os=fake_os, portalocker=Anything(), Image=Anything())
    # The frame-name templates from VideoBaseDataset.__init__.
    init = ast.parse(source_of(base, "VideoBaseDataset.__init__"))
    tmpl = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr.startswith("frame_tmpl"):
            tmpl[node.targets[0].attr] = ast.literal_eval(node.value)
    fp = load(base, "VideoBaseDataset.frame_paths", env)
    fpf = load(base, "VideoBaseDataset.frame_paths_fps", env)
    vmme = load(VLMKIT / "vlmeval/dataset/videomme.py", "VideoMME.save_video_frames", env)
    byf = load(VLMKIT / "vlmeval/dataset/mvbench.py", "MVBench_MP4.get_index_by_frame", env)
    byfps = load(VLMKIT / "vlmeval/dataset/mvbench.py", "MVBench_MP4.get_index_by_fps", env)
    for t, fps, n in sampled(grid_cases(), thin_mid):
        for mode in ("nframe", "fps"):
            for rate in ((1.0, 0.5, 2.0) if mode == "fps" else (None,)):
                if mode == "fps" and n % 11:
                    continue
                vp = video(t, fps)
                s = types.SimpleNamespace(nframe=n if mode == "nframe" else 0, fps=rate if rate else -1,
                                          data_root="/videos", frame_root="/lmu/images/Video-MME", **tmpl)
                s.frame_paths = types.MethodType(fp, s)
                s.frame_paths_fps = types.MethodType(fpf, s)
                VIDEOS[os.path.join("/videos", "video", "v.mp4")] = (t, fps)
                try:
                    paths, idx, _ = vmme(s, "v")
                    got, err = list(idx), None
                    assert len(paths) == len(idx)
                except Exception as e:
                    got, err = None, f"{type(e).__name__}: {e}"
                rule = ({"kind": "policy", "policy": "interior", "n": n} if mode == "nframe"
                        else {"kind": "policy", "policy": "fps", "n": 0, "fps": rate})
                emit(rule, t, fps, None, got, err, "VLMEvalKit vlmeval/dataset/videomme.py:VideoMME.save_video_frames")
                # MVBench_MP4's samplers
                s2 = types.SimpleNamespace(num_segments=n)
                try:
                    if mode == "nframe":
                        got, err = byf(s2, t - 1).tolist(), None
                    else:
                        got, err = byfps(s2, VideoReader(vp), rate).tolist(), None
                except Exception as e:
                    got, err = None, f"{type(e).__name__}: {e}"
                rule2 = ({"kind": "policy", "policy": "segment_mid", "n": n} if mode == "nframe" else rule)
                emit(rule2, t, fps, None, got, err, "VLMEvalKit vlmeval/dataset/mvbench.py:MVBench_MP4.get_index_by_"
                     + ("frame" if mode == "nframe" else "fps"))
    # the saved frames' names, once
    s = types.SimpleNamespace(nframe=8, fps=1.0, frame_root="images/Video-MME", **tmpl)
    names = {"nframe": fp(s, "{video}"), "fps": fpf(s, "{video}", 3)}
    return names


def vlm_qwen_cases(plain):
    """VLMEvalKit Qwen2VLChat._prepare_content (nframe / fps of the dataset) through qwen_vl_utils."""
    lin = "plain" if plain else "fma"
    path = VLMKIT / "vlmeval/vlm/qwen2_vl/model.py"

    class CV2:
        CAP_PROP_FRAME_COUNT = 7

        class VideoCapture:
            def __init__(self, p):
                self.t = VIDEOS[p][0]

            def get(self, prop):
                return float(self.t)

            def release(self):
                pass

    sys.modules["cv2"] = CV2
    prep = load(path, "Qwen2VLChat._prepare_content", dict(
        ensure_video_url=lambda v: v, ensure_image_url=lambda v: v, warnings=Anything()))
    for t, fps, n in sampled(grid_cases(), thin_mid):
        for mode in ("nframe", "fps"):
            for rate in ((1.0, 0.5, 2.0) if mode == "fps" else (None,)):
                if mode == "fps" and n % 7:
                    continue
                s = types.SimpleNamespace(min_pixels=None, max_pixels=None, total_pixels=None, FRAME_FACTOR=2,
                                          fps=rate, nframe=n if mode == "nframe" else None)
                vp = video(t, fps)
                LAST_ERROR[0] = None
                try:
                    content = prep(s, [{"type": "video", "value": vp}, {"type": "text", "value": "q"}])
                    _, videos = qvp.process_vision_info([{"role": "user", "content": content}])
                    got, err = frames_of(videos[0]), None
                except Exception as e:
                    got, err = None, LAST_ERROR[0] or f"{type(e).__name__}: {e}"
                rule = ({"kind": "qwen_nframes", "n": n, "cap": "even_below", "linspace": lin} if mode == "nframe"
                        else {"kind": "qwen_fps", "fps": rate, "linspace": lin})
                emit(rule, t, fps, None, got, err, "VLMEvalKit vlmeval/vlm/qwen2_vl/model.py:Qwen2VLChat._prepare_content + qwen_vl_utils")


def models_table():
    """(name, class) of vlmeval/config.py and the classes whose VIDEO_LLM is True."""
    root = VLMKIT / "vlmeval"
    tree = ast.parse((root / "config.py").read_text())
    names = {}

    def cls_of(v):
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "partial" and v.args:
            a = v.args[0]
            if isinstance(a, ast.Attribute):
                return a.attr
            if isinstance(a, ast.Name):
                return a.id
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    c = cls_of(v)
                    if c:
                        names[k.value] = c
    classes = {}
    for d, _, fs in os.walk(root):
        for f in sorted(fs):
            if f.endswith(".py"):
                try:
                    t = ast.parse(Path(d, f).read_text())
                except SyntaxError:
                    continue
                for n in ast.walk(t):
                    if isinstance(n, ast.ClassDef):
                        flag = None
                        for b in n.body:
                            if isinstance(b, ast.Assign) and any(isinstance(x, ast.Name) and x.id == "VIDEO_LLM" for x in b.targets):
                                flag = ast.literal_eval(b.value)
                        classes.setdefault(n.name, ([ast.unparse(b).split(".")[-1] for b in n.bases], flag))

    def video_llm(c, seen=()):
        if c not in classes or c in seen:
            return False
        bases, flag = classes[c]
        if flag is not None:
            return flag
        return any(video_llm(b, seen + (c,)) for b in bases)

    return sorted(names.items()), sorted({c for c in names.values() if video_llm(c)})


def write_models_rs():
    names, vids = models_table()
    out = ["//! VLMEvalKit e8e78f05's model names with their classes (vlmeval/config.py) and the classes",
           "//! with `VIDEO_LLM = True` (set on the class or inherited). Written by",
           "//! tests/reference/harness_vectors.py; do not edit.", "",
           "/// (model name, class), sorted by name.",
           "pub(super) const MODELS: &[(&str, &str)] = &["]
    out += [f"    ({json.dumps(k)}, {json.dumps(v)})," for k, v in names]
    out += ["];", "", "/// Classes that read the video themselves (`VIDEO_LLM = True`), sorted.",
            "pub(super) const VIDEO_LLM_CLASSES: &[&str] = &["]
    out += [f"    {json.dumps(c)}," for c in vids]
    out += ["];", ""]
    MODELS_RS.write_text("\n".join(out))


def main():
    plain = "--plain-only" in sys.argv
    if plain:
        assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"
        lmms_qwen_cases(True)
        linspace_grid(True)
        vlm_qwen_cases(True)
        Path(os.environ["PLAIN_OUT"]).write_text("\n".join(json.dumps(line) for line in LINES) + "\n")
        return
    assert torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"), "make the fma vectors on AVX2/AVX512"
    lmms_qwen_cases(False)
    linspace_grid(False)
    llava_cases()
    get_index_cases()
    names = vlm_dataset_cases()
    vlm_qwen_cases(False)
    plain_file = OUT.with_suffix(".plain.tmp")
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", PLAIN_OUT=str(plain_file))
    subprocess.run([sys.executable, __file__, "--plain-only"], env=env, check=True, capture_output=True)
    plain_out = plain_file.read_text()
    plain_file.unlink()
    text = "\n".join(json.dumps(line) for line in LINES) + "\n" + plain_out
    OUT.write_text(text)
    write_models_rs()
    print(f"{OUT}: {text.count(chr(10))} vectors, {len(text) / 1e6:.2f} MB; frame names {names}", file=sys.stderr)


if __name__ == "__main__":
    main()
