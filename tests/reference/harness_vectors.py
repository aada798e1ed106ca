#!/usr/bin/env python3
"""Writes tests/data/harness_vectors.jsonl by RUNNING the harnesses' own code, and
src/core/rules/vlmevalkit_models.rs (VLMEvalKit's model names, classes and VIDEO_LLM flags,
read from vlmeval/config.py and the model classes with `ast`).

Nothing here retypes a harness formula.

lmms-eval, every release from 0.2.0 to 0.7.3, one subprocess per release: the release's own
package is imported as it is (`lmms_eval.models.get_model`, the class's
`create_from_arg_string`, `generate_until`), with only the packages that load or run models
stubbed (transformers, accelerate, llava, flash_attn...: any name they export is a stub that
accepts every call) and decord replaced by a fake reader that reports the video's frame count
and average fps, records the indices it is asked for and returns frames carrying their own
index as pixel values. So the model id -> class resolution of `models/__init__.py`, the
constructor's defaults and `model_args` parsing, and the sampling path to the decoded frames
are each release's own. A stub processor stops the qwen-family wrappers where they hand the
frames to the model and reads back which frames they kept; for the others the indices are
the reads the wrapper made. qwen_vl_utils is imported as it is (0.0.14, with the fake decord
and an identity resize); other qwen_vl_utils releases are run the same way for comparison.

VLMEvalKit (e8e78f05): the datasets' samplers, `Qwen2VLChat._prepare_content` and
`LLaVA_OneVision.load_video` are taken out of the files with `ast` and run with stubs; and
`inference_video.infer_data` runs with the real `LLaVA_OneVision.__init__` (model loading
stubbed) on real videos read by the real decord, when the shared test videos are at hand.

Lines:
  {"rule": <FrameRule JSON>, "video": {"num_frames": T, "fps": F, "bound": [s, e] | null},
   "indices": [...] | "error": "...", "source": "...", "qwen_vl_utils": [versions]?}
  {"lmms": {"model": id, "force_simple": bool},
   "releases": {release: class | {"get_model" | "constructor" | "every_video": error, "class"?}},
   "runs": [{"model_args": "k=v,...", "cases": [[T, fps, {"release release ...": [indices] | "error"}]]}]}
  {"vlmevalkit": {"model": name, "dataset": d, "nframe": N, "fps": R}, "video": {...},
   "indices": [...] | "error": "..."}
An lmms line holds runs (model id, model_args, --force_simple) that every release treats
alike: the class the release resolved the id to (`chat.qwen2_5_vl.Qwen2_5_VL`, under
lmms_eval.models), or where it fails for every video of those runs (no such model id, the
constructor refuses the arguments, every request fails the same way); then per run and video
the outcome of each group of releases that gave the same.

Run (Python 3.11, an AVX2/AVX512 CPU):
    pip install torch==2.15.0 torchvision==0.29.2 numpy pillow pydantic packaging requests loguru tqdm pyyaml jinja2 pandas decord
    python3 tests/reference/harness_vectors.py
with the harness sources at (override with the environment variables):
    LMMS_RELEASES_DIR=/work/ref/lmms_all   one folder per release (0.2.0 ... 0.7.3), each holding
                                           the unpacked wheel (`pip download --no-deps lmms-eval==V`;
                                           0.3.4 declares Python >= 3.12: add
                                           `--python-version 3.12 --only-binary=:all:`)
    QWEN_VL_UTILS_RELEASES=/work/ref/qvu   x0.0.2 ... x0.0.14: unpacked qwen_vl_utils wheels
    VLMEVALKIT_DIR=/work/ref/vlmevalkit    (VLMEvalKit at e8e78f05)
    TEST_VIDEOS_DIR=/tmp/hf/videomme/data  the shared test videos (media/hf_home_videos.tar)
torch's float32 linspace depends on the CPU kernel: the file is made on an AVX2 machine
(rules with "linspace": "fma"); the script re-runs itself with ATEN_CPU_CAPABILITY=default for
the "plain" vectors. HV_JOBS (default 2) releases run at once; HV_CACHE=DIR keeps each worker's
results for the next run (for work on the generator). The output is the same from run to run
(about 5 minutes on 2 cores).
"""

import ast
import functools
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import traceback
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

LMMS_RELEASES = Path(os.environ.get("LMMS_RELEASES_DIR", "/work/ref/lmms_all"))
QVU_RELEASES = Path(os.environ.get("QWEN_VL_UTILS_RELEASES", "/work/ref/qvu"))
VLMKIT = Path(os.environ.get("VLMEVALKIT_DIR", "/work/ref/vlmevalkit"))
TEST_VIDEOS = Path(os.environ.get("TEST_VIDEOS_DIR", "/tmp/hf/videomme/data"))
REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "harness_vectors.jsonl"
MODELS_RS = REPO / "src" / "core" / "rules" / "vlmevalkit_models.rs"

LMMS_VERSIONS = ["0.2.0", "0.2.1", "0.2.3", "0.2.3.post1", "0.2.4", "0.3.0", "0.3.4", "0.3.5", "0.4.0",
                 "0.5.0", "0.6.0", "0.6.1", "0.7", "0.7.1", "0.7.2", "0.7.3"]
QVU_VERSIONS = ["0.0.2", "0.0.4", "0.0.5", "0.0.6", "0.0.7", "0.0.8", "0.0.9", "0.0.10", "0.0.11", "0.0.13", "0.0.14"]
QVU_MAIN = "0.0.14"


# ---------------------------------------------------------------------------------------
# Stubs for the packages that load models.
class _StubMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return stub_class(f"{cls.__name__}.{name}")


class Stub(metaclass=_StubMeta):
    """Accepts any attribute, call, iteration, comparison: the parts that do not sample."""

    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()

    def __call__(self, *a, **k):
        return Stub()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __getitem__(self, k):
        return Stub()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __gt__(self, o):
        return False

    __lt__ = __ge__ = __le__ = __gt__

    def __int__(self):
        return 0

    def _op(self, *a):
        return Stub()

    __or__ = __ror__ = __and__ = __rand__ = __add__ = __radd__ = __sub__ = __rsub__ = _op
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = __neg__ = _op


_CLASSES = {}
OVERRIDES = {}


def stub_class(name):
    if name not in _CLASSES:
        short = name.split(".")[-1]
        exc = any(w in short for w in ("Error", "Exception", "NotAvailable"))
        _CLASSES[name] = _StubMeta(short, (Stub, Exception) if exc else (Stub,), {})
    return _CLASSES[name]


def import_with_retries(name, root, keep):
    """Imports `name`; a module of the harness under `root` (not in `keep`) that fails to
    import with the model packages stubbed is stubbed itself, and the import retried. Returns
    the module and the modules stubbed."""
    import importlib

    stubbed = []
    top = name.split(".")[0]
    for _ in range(300):
        try:
            return importlib.import_module(name), stubbed
        except Exception as e:
            mods = [fr.filename[len(root) + 1:-3].replace("/", ".") for fr in traceback.extract_tb(e.__traceback__)
                    if fr.filename.startswith(root + "/") and fr.filename.endswith(".py")]
            mods = [m[:-len(".__init__")] if m.endswith(".__init__") else m for m in mods]
            bad = [m for m in mods if m not in keep and m != name and "." in m]
            if not bad:
                raise
            stubbed.append(bad[-1])
            for k in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
                del sys.modules[k]
            for m in stubbed:
                sys.modules[m] = stub_module(m)
    raise RuntimeError(f"{name}: too many modules fail to import")


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        full = f"{self.__name__}.{name}"
        if full in OVERRIDES:
            return OVERRIDES[full]
        if name == "load_pretrained_model":  # LLaVA's builders (llava, llavavid)
            return OVERRIDES["llava.model.builder.load_pretrained_model"]
        if name == "__version__":
            return "99.0.0"
        if name.startswith("__"):
            raise AttributeError(name)
        return stub_class(full)


def stub_module(name):
    m = StubModule(name)
    m.__path__ = []
    m.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    return m


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return stub_module(spec.name)

    def exec_module(self, module):
        pass


class StubFinder(importlib.abc.MetaPathFinder):
    """Serves `stub` packages as stubs, and any package that is not installed when the harness
    (a file under `harness_dirs`) imports it; real libraries probing optional packages see
    them missing as usual."""

    def __init__(self, stub, harness_dirs):
        self.stub = set(stub)
        self.harness_dirs = tuple(harness_dirs)

    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names:
            return None
        if top in self.stub:
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        if importlib.machinery.PathFinder.find_spec(top) is not None:
            return None
        f = sys._getframe(1)
        while f is not None:
            fn = f.f_code.co_filename
            if not fn.startswith("<frozen") and "importlib" not in fn:
                if fn.startswith(self.harness_dirs):
                    return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
                return None
            f = f.f_back
        return None


MODEL_PACKAGES = ["transformers", "accelerate", "flash_attn", "deepspeed", "bitsandbytes", "peft", "llava",
                  "vllm", "liger_kernel", "xformers"]


class Accelerator(Stub):
    num_processes = 1
    local_process_index = 0
    process_index = 0
    is_local_main_process = True
    is_main_process = True
    device = "cpu"


def install_stubs(harness_dirs):
    sys.meta_path.insert(0, StubFinder(MODEL_PACKAGES, harness_dirs))
    acc = stub_module("accelerate")
    acc.Accelerator = Accelerator
    sys.modules["accelerate"] = acc
    # LLaVA's builder returns (tokenizer, model, image_processor, context_len).
    OVERRIDES["llava.model.builder.load_pretrained_model"] = lambda *a, **k: (Stub(), Stub(), Stub(), 2048)


# ---------------------------------------------------------------------------------------
# The fake decord.
VIDEOS = {}  # path -> (T, fps)
LOG = []  # ("batch", [indices]) / ("item", index), in the order the reader was asked
VIDEO_DIR = Path(os.environ.get("HV_VIDEO_DIR", "/tmp/harness_vectors_videos"))


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
        # A 640x360 image PIL accepts (a wrapper may size the video by its first frame);
        # frames read one by one are told apart by the reader's log.
        return np.broadcast_to(np.uint8(self.i % 256), (360, 640, 3))


class VideoReader:
    def __init__(self, path, ctx=None, num_threads=0, **kw):
        if isinstance(path, (list, tuple)):
            path = path[0]
        path = str(path)
        if path.startswith("file://"):
            path = path[len("file://"):]
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


def install_fake_decord():
    decord = types.ModuleType("decord")
    decord.__spec__ = importlib.machinery.ModuleSpec("decord", None)
    decord.VideoReader = VideoReader
    decord.cpu = lambda *a, **k: None
    decord.gpu = lambda *a, **k: None
    decord.bridge = types.SimpleNamespace(set_bridge=lambda *a, **k: None)
    sys.modules["decord"] = decord
    return decord


def video(t, fps):
    """A video path the fake reader knows (an empty file: some wrappers check it exists)."""
    VIDEO_DIR.mkdir(parents=True, exist_ok=True)
    p = VIDEO_DIR / f"T{t}_F{fps}.mp4"
    if not p.exists():
        p.touch()
    VIDEOS[str(p)] = (t, fps)
    return str(p)


# ---------------------------------------------------------------------------------------
# qwen_vl_utils as it is, reading through the fake decord; the resize does not touch indices.
LAST_ERROR = [None]


def import_qwen_vl_utils(version):
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "decord"
    sys.path.insert(0, str(QVU_RELEASES / f"x{version}"))
    import qwen_vl_utils.vision_process as qvp

    if hasattr(qvp, "logger"):
        qvp.logger.disabled = True
    qvp.transforms = types.SimpleNamespace(functional=types.SimpleNamespace(resize=lambda v, size, **kw: v))
    backends = getattr(qvp, "VIDEO_READER_BACKENDS", None)
    if backends is not None:
        orig = backends["decord"]

        def decord_keep_error(ele):
            try:
                return orig(ele)
            except Exception as e:  # remembered so the vector names qwen_vl_utils' own condition
                LAST_ERROR[0] = str(e)
                raise

        def no_torchvision(ele):
            # qwen_vl_utils retries a failed decord read with torchvision; the fake videos have
            # no content, so the retry reports the condition the decord path raised.
            raise RuntimeError("torchvision fallback")

        backends["decord"] = decord_keep_error
        backends["torchvision"] = no_torchvision
    return qvp


def frames_of(v):
    """The frame indices carried by a decoded video (tensor, array or list of PIL images)."""
    import torch

    if isinstance(v, (list, tuple)) and v and hasattr(v[0], "getpixel"):
        return [int(im.getpixel((0, 0))[0]) for im in v]
    if isinstance(v, (list, tuple)) and v and not np.isscalar(v[0]):
        v = v[0] if len(v) == 1 else v
    t = v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v))
    t = t.reshape(t.shape[0], -1)[:, 0]
    return [int(round(float(x))) for x in t]


# ---------------------------------------------------------------------------------------
# The lmms-eval worker: one release, its own package.
class Stop(Exception):
    pass


CAPTURED = [None]


class Processor(Stub):
    """Stops the harness where it hands the frames to the model, keeping them."""

    def __call__(self, *a, videos=None, **k):
        CAPTURED[0] = frames_of(videos[0]) if videos is not None and len(videos) else None
        raise Stop()

    def apply_chat_template(self, *a, **k):
        return ["text"]


def lmms_worker(version, qvu):
    root = os.path.realpath(LMMS_RELEASES / version)
    sys.path.insert(0, root)
    install_fake_decord()
    install_stubs([root + "/", str(LMMS_RELEASES / version) + "/"])
    import_qwen_vl_utils(qvu)
    try:
        import av

        def no_pyav(*a, **k):
            raise RuntimeError(PYAV_MARK)

        av.open = no_pyav
    except ImportError:
        pass
    import logging

    logging.disable(logging.CRITICAL)
    try:
        from loguru import logger

        logger.remove()
    except Exception:
        pass
    wrappers = ["qwen2_5_vl", "qwen3_vl", "qwen2_vl", "llava_onevision", "llava_onevision1_5", "llava_vid",
                "internvl2", "internvl3", "internvl3_5"]
    keep = {"lmms_eval.models", "lmms_eval.models.registry_v2"} | {
        f"lmms_eval.models{sub}.{w}" for w in wrappers for sub in ("", ".simple", ".chat")}
    M, stubbed = import_with_retries("lmms_eval.models", root, keep)
    if stubbed:
        print(f"lmms-eval {version}: modules stubbed because they do not import: {stubbed}", file=sys.stderr)

    try:
        from lmms_eval.api.instance import Instance
    except Exception:
        Instance = None

    def request(chat, vpath):
        doc = {"video": vpath}
        if chat:
            def msgs(d):
                return [{"role": "user", "content": [{"type": "video", "url": d["video"]}, {"type": "text", "text": "q"}]}]
            args = ("ctx", msgs, {"max_new_tokens": 8}, 0, "task", "test")
        else:
            args = ("ctx", {"max_new_tokens": 8, "until": ["\n\n"]}, lambda d: [d["video"]], 0, "task", "test")
        req = None
        for meta in ({"task": "task", "doc_id": 0, "repeats": 1}, ("task", 0, 1)):
            try:
                req = Instance(request_type="generate_until", arguments=args, idx=0, metadata=meta)
                break
            except Exception:
                pass
        if req is None:
            req = types.SimpleNamespace(args=args, arguments=args, metadata={})
        return req, {"task": {"test": [doc]}}

    classes = {}
    # 0.2.0 and 0.2.1 resolve the id through the registry the model files fill
    # (evaluator.simple_evaluate: lmms_eval.api.registry.get_model); later releases through
    # lmms_eval.models.get_model.
    if hasattr(M, "get_model"):
        resolve_id = M.get_model
    else:
        import lmms_eval.api.registry as R

        resolve_id = R.get_model

    import inspect

    takes_force_simple = len(inspect.signature(resolve_id).parameters) > 1

    def get_class(model, force_simple):
        key = (model, force_simple)
        if key not in classes:
            if force_simple and not takes_force_simple:
                classes[key] = (None, None)  # no --force_simple before 0.4
                return classes[key]
            try:
                cls = resolve_id(model, force_simple) if force_simple else resolve_id(model)
                classes[key] = (cls, None)
            except Exception as e:
                classes[key] = (None, f"{type(e).__name__}: {e}")
        return classes[key]

    def run_one(lm, chat, capture, t, fps):
        req, td = request(chat, video(t, fps))
        lm.task_dict = td
        for attr in ("processor", "_processor"):
            if attr == "processor" or hasattr(lm, attr):
                try:
                    setattr(lm, attr, Processor())
                except Exception:  # a read-only property over _processor
                    pass
        LOG.clear()
        CAPTURED[0] = None
        LAST_ERROR[0] = None
        raised = []

        def tracer(frame, event, arg):
            if frame.f_code.co_filename.startswith(root):
                return local
            return None

        def local(frame, event, arg):
            if event == "exception" and not raised:
                raised.append(f"{arg[0].__name__}: {arg[1]}")
            return local

        err = None
        sys.settrace(tracer)
        try:
            lm.generate_until([req])
        except Stop:
            pass
        except Exception as e:
            err = f"{type(e).__name__}: {e}"
        finally:
            sys.settrace(None)
        if LAST_ERROR[0]:
            err = f"qwen_vl_utils: {LAST_ERROR[0]}"
        if capture == "processor":
            if CAPTURED[0] is not None:
                return CAPTURED[0], None
            return None, err or (raised[0] if raised else "the wrapper did not reach the model")
        reads = []
        for kind, x in LOG:
            reads.extend(x if kind == "batch" else [x])
        if not reads and (err or raised):
            # The wrapper caught it (llava_vid answers "can not load"): the model saw nothing.
            return None, err or raised[0]
        return reads, None

    specs = json.load(sys.stdin)
    out = []
    for spec in specs:
        cls, err = get_class(spec["model"], spec["force_simple"])
        if cls is None:
            if err is not None:
                out.append({"spec": spec["id"], "stage": "get_model", "error": err})
            continue
        cname = f"{cls.__module__}.{cls.__name__}"
        chat = not getattr(cls, "is_simple", True)
        # InternVL's tiling and transforms of each frame read (448-pixel tiles, slow and not
        # part of the sampling) are replaced by a pass-through; the reads are unchanged.
        mod = sys.modules[cls.__module__]
        if "dynamic_preprocess" in vars(mod):
            mod.dynamic_preprocess = lambda image, **k: [image]
        if "build_transform" in vars(mod):
            import torch

            mod.build_transform = lambda input_size=448, **k: (lambda img: torch.zeros(3, 2, 2))
        for args, videos in spec["runs"]:
            # A checkpoint name as users pass it (some constructors branch on it: llava_vid
            # 0.2.x fails on its own default, a "v1.5" checkpoint); not part of the recorded args.
            full = ",".join(x for x in (PRETRAINED.get(spec["model"], ""), args) if x)
            try:
                lm = cls.create_from_arg_string(full, {"batch_size": 1, "max_batch_size": None, "device": None})
            except Exception as e:
                out.append({"spec": spec["id"], "args": args, "class": cname, "stage": "constructor",
                            "error": f"{type(e).__name__}: {e}"})
                continue
            for t, fps in videos:
                got, e = run_one(lm, chat, spec["capture"], t, fps)
                out.append({"spec": spec["id"], "args": args, "class": cname, "video": [t, fps],
                            "indices": got, "error": e})
    json.dump(out, OUTPUT[0])


OUTPUT = [sys.stdout]
# A PyAV read of a fake video: frameaudit does not reproduce PyAV's frame count.
PYAV_MARK = "PyAV reads the video (not reproduced: the fake videos have no content)"
PRETRAINED = {"llava_vid": "pretrained=lmms-lab/LLaVA-NeXT-Video-7B", "llava_onevision": "pretrained=lmms-lab/llava-onevision-qwen2-7b-ov"}


# ---------------------------------------------------------------------------------------
# The cases.
def grid_cases():
    ts = list(range(1, 41)) + [100, 150, 720, 1350, 1800, 2500, 5400, 18000, 100000]
    fpss = [24.0, 25.0, 29.97, 30.0, 59.94, 1.0, 0.5, 7.3]
    ns = list(range(1, 67)) + [96, 128, 256]
    for t in ts:
        for fps in fpss:
            for n in ns:
                yield t, fps, n


def sampled(keep):
    # Every T, every fps and every N appear; the full product is thinned by a fixed stride.
    return [c for k, c in enumerate(grid_cases()) if keep(k, *c)]


def thin_mid(k, t, fps, n):
    edge = t <= 3 or n <= 3 or n in (96, 128, 256) or t in (1800, 2500, 1350, 720, 100000)
    return edge and k % 23 == 0 or k % 97 == 0


def thin_most(k, t, fps, n):
    edge = t <= 3 or n <= 3 or t in (1800, 2500)
    return edge and k % 97 == 0 or k % 401 == 0


# A few videos for the runs without a frame budget (the constructor's default applies).
DEFAULT_VIDEOS = [(1800, 30.0), (2500, 25.0), (100, 25.0), (40, 1.0), (150, 59.94), (5, 30.0), (1, 30.0), (33, 7.3)]


def lmms_specs():
    """(id, model, force_simple, capture, runs): runs are (model_args, videos)."""
    # Edges where the wrappers' caps and resamples part: T around N, tiny videos.
    edges = [(t, 29.97, n) for t in (2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65) for n in (t - 1, t, t + 1)
             if n > 0]
    qwen = [c for c in sampled(thin_most) + edges if not (c[0] > 20000 and c[2] > 128)]
    fps_cases = qwen[::4]
    few = qwen[::3]

    def by_n(cases, tmpl):
        runs = {}
        for t, fps, n in cases:
            runs.setdefault(tmpl.format(n=n), []).append((t, fps))
        return list(runs.items())

    def with_rates(cases, tmpl, rates=(0.5, 1, 2)):
        runs = {}
        for t, fps, n in cases:
            for f in rates:
                runs.setdefault(tmpl.format(n=n, f=f), []).append((t, fps))
        return list(runs.items())

    specs = []

    def add(model, capture, runs, force_simple=(False, True)):
        for fs in force_simple:
            specs.append({"id": len(specs), "model": model, "force_simple": fs, "capture": capture, "runs": runs})

    add("qwen2_5_vl", "processor", by_n(qwen, "max_num_frames={n}") + [("", DEFAULT_VIDEOS)]
        + with_rates(fps_cases, "max_num_frames={n},fps={f}"))
    add("qwen3_vl", "processor", by_n(qwen, "max_num_frames={n}") + [("", DEFAULT_VIDEOS)]
        + with_rates(fps_cases, "max_num_frames={n},fps={f}")
        + by_n(fps_cases, "max_num_frames={n},total_pixels=20000000"))
    add("qwen2_vl", "processor", by_n(qwen, "max_num_frames={n}") + [("", DEFAULT_VIDEOS)]
        + with_rates(few[::3], "max_num_frames={n},fps={f}", (1,)), (False,))
    add("llava_onevision1_5", "processor", by_n(qwen, "max_num_frames={n}") + [("", DEFAULT_VIDEOS)]
        + with_rates(few, "max_num_frames={n},fps={f}", (1,)))
    add("llava_vid", "reads", by_n(qwen, "max_frames_num={n}") + [("", DEFAULT_VIDEOS)]
        + by_n(few, "max_frames_num={n},video_fps=2") + by_n(few, "max_frames_num={n},force_sample=True")
        + by_n([(t, f, 0) for t, f in DEFAULT_VIDEOS], "max_frames_num={n}")
        + by_n(few, "max_frames_num={n},video_decode_backend=decord")
        + [("max_frames_num=8,video_decode_backend=pyav", DEFAULT_VIDEOS[:3]),
           ("video_decode_backend=decord", DEFAULT_VIDEOS)], (False,))
    add("llava_onevision", "reads", by_n(few, "max_frames_num={n}") + [("", DEFAULT_VIDEOS)], (False,))
    for model, cases in (("internvl3", qwen), ("internvl2", few), ("internvl3_5", few[::2])):
        add(model, "reads", by_n(cases, "modality=video,num_frame={n}") + [("modality=video", DEFAULT_VIDEOS)]
            + [("num_frame=8", DEFAULT_VIDEOS[:2])], (False,))
    return specs


def cached(name, make):
    """`make()`, or its result of an earlier run when HV_CACHE names a folder (for working on
    the generator; delete the folder when a harness or the cases change)."""
    folder = os.environ.get("HV_CACHE")
    if not folder:
        return make()
    path = Path(folder) / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text())
    out = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def run_lmms_release(version, specs, qvu=QVU_MAIN):
    return cached(f"lmms-{version}-{qvu}", lambda: _run_lmms_release(version, specs, qvu))


def _run_lmms_release(version, specs, qvu):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, __file__, "--lmms-worker", version, qvu], input=json.dumps(specs),
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"lmms-eval {version} worker failed:\n{p.stderr[-4000:]}")
    for line in p.stderr.splitlines():
        if "modules stubbed" in line:
            print(line, file=sys.stderr)
    return json.loads(p.stdout)


def version_key(v):
    parts = v.replace(".post", ".").split(".")
    return tuple(int(x) for x in parts) + (0,) * (4 - len(parts))


def short_class(c):
    return c[len("lmms_eval.models."):] if c and c.startswith("lmms_eval.models.") else c


def short_error(e):
    # The harness's message, cut (a missing model id lists every model of the release).
    return e if len(e) <= 160 else e[:157] + "..."


def lmms_lines(specs, results):
    """Per wrapper id and --force_simple, per set of runs that the releases treat alike: what
    each release resolved the id to or where it fails for every video, then for each run
    (model_args) and video the outcome of each group of releases that gave the same."""
    by_spec = {s["id"]: s for s in specs}
    runs = {}  # (spec id, args) -> {"releases": {v: ...}, "cases": {(t, fps): {outcome: [v]}}}
    for version in sorted(results, key=version_key):
        res = results[version]
        per_run = {}
        for r in res:
            if "video" in r:
                per_run.setdefault((r["spec"], r["args"]), []).append(r)
        for r in res:
            spec = by_spec[r["spec"]]
            if r.get("stage") == "get_model":
                for args, _ in spec["runs"]:
                    runs.setdefault((r["spec"], args), {"releases": {}, "cases": {}})["releases"][version] = {
                        "get_model": short_error(r["error"])}
            elif r.get("stage") == "constructor":
                runs.setdefault((r["spec"], r["args"]), {"releases": {}, "cases": {}})["releases"][version] = {
                    "constructor": short_error(r["error"]), "class": short_class(r["class"])}
        for k, rs in per_run.items():
            run = runs.setdefault(k, {"releases": {}, "cases": {}})
            errors = {x["error"] for x in rs}
            lengths = {x["video"][0] for x in rs}
            rates = {x["video"][1] for x in rs}
            if len(lengths) > 1 and len(rates) > 1 and all(x["indices"] is None for x in rs) and len(errors) == 1:
                run["releases"][version] = {"every_video": short_error(rs[0]["error"]),
                                            "class": short_class(rs[0]["class"])}
                continue
            run["releases"][version] = short_class(rs[0]["class"])
            for x in rs:
                outcome = json.dumps(x["indices"] if x["indices"] is not None else x["error"], separators=(",", ":"))
                run["cases"].setdefault(tuple(x["video"]), {}).setdefault(outcome, []).append(version)
    groups = {}
    for (sid, args), run in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        spec = by_spec[sid]
        key = (spec["model"], spec["force_simple"], json.dumps(run["releases"], sort_keys=True))
        cases = [[t, fps, {" ".join(vs): json.loads(o) for o, vs in outcomes.items()}]
                 for (t, fps), outcomes in run["cases"].items()]
        groups.setdefault(key, []).append({"model_args": args, "cases": cases})
    lines = []
    for (model, fs, releases), rs in groups.items():
        lines.append({"lmms": {"model": model, "force_simple": fs}, "releases": json.loads(releases), "runs": rs})
    lines.sort(key=lambda l: (l["lmms"]["model"], l["lmms"]["force_simple"], l["runs"][0]["model_args"]))
    return lines


# ---------------------------------------------------------------------------------------
# qwen_vl_utils releases, asked directly (nframes and fps paths).
def fake_read_video(path, start_pts=0.0, end_pts=None, pts_unit="pts", output_format="THWC", **kw):
    """torchvision.io.read_video of a fake video: every frame, each carrying its index."""
    import torch

    t, fps = VIDEOS[str(path)[len("file://"):] if str(path).startswith("file://") else str(path)]
    v = torch.arange(t, dtype=torch.float32).reshape(-1, 1, 1, 1).expand(t, 2, 2, 3).clone()
    if output_format == "TCHW":
        v = v.permute(0, 3, 1, 2)
    return v, None, {"video_fps": fps}


def qvu_worker(version):
    install_fake_decord()
    qvp = import_qwen_vl_utils(version)
    if getattr(qvp, "VIDEO_READER_BACKENDS", None) is None:
        # 0.0.2 to 0.0.5 read every frame with torchvision, then pick.
        qvp.io = types.SimpleNamespace(read_video=fake_read_video)
    cases = json.load(sys.stdin)
    out = []
    for t, fps, kind, x, extra in cases:
        ele = {"video": video(t, fps)}
        if kind == "nframes":
            ele["nframes"] = x
        else:
            ele["fps"] = x
            ele.update(extra)
        LAST_ERROR[0] = None
        try:
            v = qvp.fetch_video(ele)
            out.append({"indices": frames_of(v[0] if isinstance(v, tuple) else v)})
        except Exception as e:  # the condition as qwen_vl_utils words it
            out.append({"error": LAST_ERROR[0] or str(e)})
    json.dump(out, OUTPUT[0])


def qvu_cases():
    cases = []
    for t, fps, n in sampled(thin_most):
        if t > 20000 and n > 128:
            continue
        cases.append((t, fps, "nframes", n, {}))
    for t, fps, n in sampled(thin_mid)[::3]:
        # qwen_vl_utils' fps count: short videos, where the releases part (the long ones give
        # hundreds of indices each).
        for f in (0.5, 1.0, 2.0):
            if t <= 200 or (t + n) % 9 == 0:
                cases.append((t, fps, "fps", f, {}))
        if n % 3 == 0 and t <= 2500:
            cases.append((t, fps, "fps", 2.0, {"max_frames": n}))
    # Where rounding the fps count (0.0.8 and older) and flooring it (0.0.9 on) part: counts
    # with an odd whole part.
    for t in range(1, 200, 6):
        for fps in (7.3, 24.0, 29.97):
            for f in (0.5, 1.0, 2.0):
                cases.append((t, fps, "fps", f, {}))
    return cases


def qvu_lines():
    cases = qvu_cases()
    results = {}

    def run(v):
        p = subprocess.run([sys.executable, __file__, "--qvu-worker", v], input=json.dumps(cases),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"qwen_vl_utils {v} worker failed:\n{p.stderr[-4000:]}")
        return json.loads(p.stdout)

    for v in QVU_VERSIONS:
        results[v] = cached(f"qvu-{v}", lambda: run(v))
    lines = []
    big = {}
    for i, (t, fps, kind, x, extra) in enumerate(cases):
        outcomes = {}
        for v in QVU_VERSIONS:
            outcomes.setdefault(json.dumps(results[v][i]), []).append(v)
        if any(len(json.loads(o).get("indices") or []) > 100 for o in outcomes):
            big[kind] = big.get(kind, 0) + 1
            if big[kind] > 6:
                continue
        if kind == "nframes":
            rule = {"kind": "qwen_nframes", "n": x, "cap": "none", "linspace": "fma"}
        else:
            rule = {"kind": "qwen_fps", "fps": x, **extra, "linspace": "fma"}
        for outcome, vs in outcomes.items():
            line = {"rule": rule, "video": {"num_frames": t, "fps": fps, "bound": None}}
            line.update(json.loads(outcome))
            line["source"] = f"qwen_vl_utils fetch_video ({kind})"
            line["qwen_vl_utils"] = vs
            lines.append(line)
    return lines


# ---------------------------------------------------------------------------------------
# ast extraction (VLMEvalKit's files).
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


LINES = []
BIG = {}


def emit(rule, t, fps, bound, indices, error, source):
    # Long index lists are kept for a few cases of each source: they would make the file huge.
    if indices is not None and len(indices) > 100 and not source.endswith("the kernels differ"):
        key = (source, rule.get("linspace"))
        BIG[key] = BIG.get(key, 0) + 1
        if BIG[key] > 4:
            return
    line = {"rule": rule, "video": {"num_frames": t, "fps": fps, "bound": bound}}
    if error is not None:
        line["error"] = error
    else:
        line["indices"] = [int(i) for i in indices]
    line["source"] = source.replace("VLMEvalKit ", "vlmevalkit:").replace("vlmeval/", "")
    LINES.append(line)


def linspace_grid(plain, qvp):
    """torch.linspace(0, T-1, n).round() itself, through qwen_vl_utils nframes: the cases where
    torch's FMA and DEFAULT CPU kernels round an index differently (found by scanning T up to
    32768), and a thin grid."""
    lin = "plain" if plain else "fma"
    cases = [(t, n) for t in list(range(2, 160)) + [719, 720, 1349, 1350, 1799, 1800, 2499, 2500, 5400, 18000, 100000]
             for n in range(2, min(t, 400) + 1, 2) if not ((t * 7 + n) % (29 if t > 100 else 11) and n > 12)]
    if plain:
        # The DEFAULT kernel: where it parts from FMA, and a sample of the rest.
        cases = cases[::9]
    cases += [tuple(c) for c in KERNEL_CASES]
    for t, n in cases:
        LAST_ERROR[0] = None
        LOG.clear()
        try:
            qvp.fetch_video({"video": video(t, 30.0), "nframes": n})
            got, err = LOG[-1][1], None
        except Exception as e:
            got, err = None, LAST_ERROR[0] or str(e)
        kernel = [t, n] in KERNEL_CASES
        emit({"kind": "qwen_nframes", "n": n, "cap": "none", "linspace": lin}, t, 30.0, None, got, err,
             f"qwen_vl_utils {QVU_MAIN} fetch_video (nframes)" + (", the kernels differ" if kernel else ""))


# (T, nframes) where torch's two CPU kernels give different rounded indices: filled in by
# kernel_scan() when it finds any.
KERNEL_CASES = []


class FakePath:
    """os.path whose frames already exist, so the dataset samplers return without writing."""

    join = staticmethod(os.path.join)
    splitext = staticmethod(os.path.splitext)

    @staticmethod
    def exists(p):
        return True


def vlm_llava_cases():
    vk = load(VLMKIT / "vlmeval/vlm/llava/llava.py", "LLaVA_OneVision.load_video", dict(np=np))
    for t, fps, n in sampled(thin_mid) + [(t, 30.0, 0) for t in (1, 100)]:
        for force in (False, True):
            if force and n % 3:
                continue
            LOG.clear()
            try:
                vk(None, video(t, fps), n, 1, force_sample=force)
                got, err = (LOG[-1][1] if LOG else []), None
            except Exception as e:
                got, err = None, f"{type(e).__name__}: {e}"
            emit({"kind": "llava_stride", "n": n, "rate": 1.0, "force_sample": force}, t, fps, None, got, err,
                 "VLMEvalKit vlmeval/vlm/llava/llava.py:LLaVA_OneVision.load_video")


def vlm_get_index_cases():
    mvb = load(VLMKIT / "vlmeval/dataset/mvbench.py", "MVBench.get_index", dict(np=np))
    # MVBench with the question's window
    bounds = [(0.0, 1.0), (0.5, 2.5), (1.0, 5.0), (2.3, 4.7), (0.0, 1e9), (3.0, 3.2), (10.0, 20.0), (7.0, 8.0)]
    for t in (30, 100, 150, 720, 1350):
        for fps in (24.0, 29.97, 30.0, 7.3):
            for n in (1, 2, 4, 8, 16, 32):
                for b in bounds[(t + n) % 2::2] if n > 2 else bounds:
                    selfo = types.SimpleNamespace(num_segments=n)
                    try:
                        got, err = mvb(selfo, b, float(fps), t - 1, first_idx=0).tolist(), None
                        if any(i < 0 or i >= t for i in got):
                            got, err = None, "index outside the video"
                    except Exception as e:
                        got, err = None, f"{type(e).__name__}: {e}"
                    emit({"kind": "get_index", "n": n, "bounded": True}, t, fps, list(b), got, err,
                         "VLMEvalKit vlmeval/dataset/mvbench.py:MVBench.get_index")


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
    for t, fps, n in sampled(thin_mid):
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
                if mode == "fps" or n % 2 == 0 or t <= 3 or n <= 3:
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
                if mode == "fps" or n % 2 == 1 or t <= 3 or n <= 3:
                    emit(rule2, t, fps, None, got, err, "VLMEvalKit vlmeval/dataset/mvbench.py:MVBench_MP4.get_index_by_"
                         + ("frame" if mode == "nframe" else "fps"))
    # the saved frames' names, once
    s = types.SimpleNamespace(nframe=8, fps=1.0, frame_root="images/Video-MME", **tmpl)
    names = {"nframe": fp(s, "{video}"), "fps": fpf(s, "{video}", 3)}
    return names


def vlm_qwen_cases(plain, qvp):
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
    cases = sampled(thin_mid if not plain else thin_most)
    for t, fps, n in cases:
        for mode in ("nframe", "fps"):
            for rate in ((1.0, 0.5, 2.0) if mode == "fps" else (None,)):
                if mode == "fps" and n % 7:
                    continue
                if mode == "nframe" and not plain and n % 2 and t > 3 and n > 3:
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


# ---------------------------------------------------------------------------------------
# VLMEvalKit's own infer_data with LLaVA_OneVision on real videos (real decord).
def vlm_llava_worker():
    """inference_video.infer_data -> LLaVA_OneVision (its own __init__, model loading stubbed)
    -> generate_inner_video -> load_video with the real decord, on the shared test videos."""
    sys.path.insert(0, str(VLMKIT))
    import decord

    reads = []
    orig_get_batch = decord.VideoReader.get_batch

    def get_batch(self, idx):
        reads.append([int(i) for i in idx])
        return orig_get_batch(self, idx)

    decord.VideoReader.get_batch = get_batch
    install_stubs([str(VLMKIT) + "/"])
    import logging

    logging.disable(logging.CRITICAL)
    # vlmeval's package imports every dataset and model: a module that fails to import with
    # the packages stubbed is stubbed itself (none of them is on the path run here).
    keep = {"vlmeval.config", "vlmeval.inference_video", "vlmeval.vlm.base", "vlmeval.vlm.llava.llava"}
    iv, stubbed = import_with_retries("vlmeval.inference_video", str(VLMKIT), keep)
    from vlmeval.config import supported_VLM
    import pandas as pd

    class Dataset:
        def __init__(self, nframe, fps, path):
            self.dataset_name = "Video-MME"
            self.nframe, self.fps, self.path = nframe, fps, path
            self.data = pd.DataFrame({"index": [0], "video": [Path(path).stem], "question": ["q"]})

        def build_prompt(self, idx, video_llm):
            assert video_llm
            return [dict(type="video", value=self.path), dict(type="text", value="q")]

    out = []
    work = Path(os.environ.get("HV_WORK_DIR", "/tmp/harness_vectors_work"))
    for model_name in ("llava_video_qwen2_7b", "llava_onevision_qwen2_7b_ov"):
        for path in sorted(TEST_VIDEOS.glob("*.mp4")):
            vr = decord.VideoReader(str(path))
            t, fps = len(vr), float(vr.get_avg_fps())
            for nframe, rate in ((8, -1), (16, -1), (32, -1), (64, -1), (0, 1.0)):
                reads.clear()
                wd = work / f"{model_name}_{path.stem}_{nframe}_{rate}"
                wd.mkdir(parents=True, exist_ok=True)
                for f in wd.iterdir():
                    f.unlink()
                model = supported_VLM[model_name]()
                orig = model.generate_inner_video

                def generate_inner_video(message, dataset=None, orig=orig):
                    try:
                        return orig(message, dataset)
                    except Exception as e:  # the stub model, past the frames
                        return f"(stub model: {type(e).__name__})"

                model.generate_inner_video = generate_inner_video
                try:
                    iv.infer_data(model, model_name, str(wd), Dataset(nframe, rate, str(path)), str(wd / "out.pkl"))
                    line = {"indices": reads[0] if reads else []}
                except Exception as e:
                    line = {"error": f"{type(e).__name__}: {e}"}
                out.append({"vlmevalkit": {"model": model_name, "dataset": "Video-MME", "nframe": nframe, "fps": rate,
                                           "force_sample": bool(getattr(model, "force_sample", None))},
                            "video": {"num_frames": t, "fps": fps, "bound": None, "file": path.name}, **line})
    json.dump({"lines": out, "stubbed": stubbed}, OUTPUT[0])


def vlm_llava_lines():
    if not TEST_VIDEOS.is_dir():
        print(f"note: {TEST_VIDEOS} is absent; VLMEvalKit's infer_data on real videos is skipped", file=sys.stderr)
        return []
    p = subprocess.run([sys.executable, __file__, "--vlm-llava-worker"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"VLMEvalKit llava worker failed:\n{p.stderr[-4000:]}")
    r = json.loads(p.stdout)
    print(f"VLMEvalKit infer_data on real videos: {len(r['lines'])} runs; vlmeval modules stubbed because they "
          f"do not import without the model packages: {r['stubbed']}", file=sys.stderr)
    return r["lines"]


# ---------------------------------------------------------------------------------------
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
    # As cargo fmt would leave it.
    subprocess.run(["rustfmt", "--edition", "2024", str(MODELS_RS)], check=False)


def kernel_scan():
    """(T, n) where torch's FMA and DEFAULT float32 linspace kernels round an index
    differently: the same scan (T from 7000 to 32768, even n from 240 to 1024; a full scan of
    T <= 3000 and every n found none) under both kernels, compared; 12 of them, spread."""
    code = ("import torch,sys,zlib,json\ntorch.set_num_threads(1)\nout={}\n"
            "for T in range(7000,32769,37):\n"
            "  for n in range(240,min(T,1024)+1,2):\n"
            "    out[f'{T},{n}']=zlib.crc32(torch.linspace(0,T-1,n).round().long().numpy().tobytes())\n"
            "json.dump(out,sys.stdout)")
    envs = (dict(os.environ), dict(os.environ, ATEN_CPU_CAPABILITY="default"))
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda env: json.loads(subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout), envs))
    differ = sorted(tuple(map(int, k.split(","))) for k in runs[0] if runs[0][k] != runs[1][k])
    print(f"torch's two linspace kernels round differently at {len(differ)} of {len(runs[0])} (T, n)", file=sys.stderr)
    step = max(1, len(differ) // 12)
    return [list(c) for c in differ[::step][:12]]


def dumps(line):
    return json.dumps(line, separators=(",", ":"))


def worker_output():
    """The workers' JSON goes to the real stdout; whatever the harness prints goes to stderr."""
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def main():
    if sys.argv[1:2] in (["--lmms-worker"], ["--qvu-worker"], ["--vlm-llava-worker"]):
        OUTPUT[0] = worker_output()
        if sys.argv[1] == "--lmms-worker":
            lmms_worker(sys.argv[2], sys.argv[3])
        elif sys.argv[1] == "--qvu-worker":
            qvu_worker(sys.argv[2])
        else:
            vlm_llava_worker()
        OUTPUT[0].flush()
        return
    import torch

    plain = "--plain-only" in sys.argv
    install_fake_decord()
    qvp = import_qwen_vl_utils(QVU_MAIN)
    if plain:
        assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"
        KERNEL_CASES.extend(json.loads(os.environ["KERNEL_CASES"]))
        linspace_grid(True, qvp)
        vlm_qwen_cases(True, qvp)
        Path(os.environ["PLAIN_OUT"]).write_text("".join(dumps(line) + "\n" for line in LINES))
        return
    assert torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"), "make the fma vectors on AVX2/AVX512"
    KERNEL_CASES.extend(cached("kernels", kernel_scan))
    print(f"torch kernels differ at {len(KERNEL_CASES)} (T, n): {KERNEL_CASES[:20]}", file=sys.stderr)
    specs = lmms_specs()
    with ThreadPoolExecutor(max_workers=int(os.environ.get("HV_JOBS", "2"))) as pool:
        futures = {v: pool.submit(run_lmms_release, v, specs) for v in LMMS_VERSIONS}
        results = {v: f.result() for v, f in futures.items()}
    lmms = lmms_lines(specs, results)
    qvu = qvu_lines()
    linspace_grid(False, qvp)
    vlm_llava_cases()
    vlm_get_index_cases()
    names = vlm_dataset_cases()
    vlm_qwen_cases(False, qvp)
    vlm_llava = vlm_llava_lines()
    plain_file = OUT.with_suffix(".plain.tmp")
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", PLAIN_OUT=str(plain_file), KERNEL_CASES=json.dumps(KERNEL_CASES))
    subprocess.run([sys.executable, __file__, "--plain-only"], env=env, check=True, capture_output=True)
    plain_out = plain_file.read_text()
    plain_file.unlink()
    text = "".join(dumps(line) + "\n" for line in lmms + qvu + LINES + vlm_llava) + plain_out
    OUT.write_text(text)
    write_models_rs()
    print(f"{OUT}: {text.count(chr(10))} vectors, {len(text) / 1e6:.2f} MB; frame names {names}", file=sys.stderr)


if __name__ == "__main__":
    main()
