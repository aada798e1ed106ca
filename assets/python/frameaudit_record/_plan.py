"""Frame plans (docs/intervention.md): which frames to hand the harness instead of those it
asks for, by video, for one run of a plan made by ``frameaudit intervene plan``.

The recorder's main process checks the plan and the run (``select``) and writes the
selection to a private file; every recorded process loads that selection (``load``) and
looks each decode's video up in it (``lookup``).  Standard library only.
"""

import json
import os
import tempfile

# The checked selection of the run, written once by the recorder's main process: every
# process of the run applies the same frames, whatever happens to the plan file meanwhile.
ENV_PLAN = "FRAMEAUDIT_RECORD_PLAN"
SCHEMA = "frameaudit/plan@1"

# video name (with and without extension) -> (indices, strategy, pass); None: no plan
_active = {"videos": None}


class PlanError(Exception):
    pass


def match_name(video):
    """The name a decode's video is matched by: the file name without its folder and its
    extension (`a/x.mp4` and `x.mkv` are both `x`)."""
    base = os.path.basename(str(video).rstrip("/"))
    stem, _ = os.path.splitext(base)
    return stem or base


def select(path, run, strategy=None, pass_=0):
    """The plan's entries for RUN (MODEL/CONFIG), one strategy, one pass: a dict of match
    name -> (indices, strategy, pass), and a one-line summary.  PlanError says why not, in
    one line that names the plan and the entry: a plan is input, and whatever it holds
    ends here, never in a traceback."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f, parse_constant=_no_constant)
    except RecursionError:
        raise PlanError("cannot read the plan %s: it is nested too deep to be a plan" % path)
    except (OSError, ValueError, MemoryError) as err:
        raise PlanError("cannot read the plan %s: %s" % (path, _line(err)))
    try:
        return _select(plan, path, run, strategy, pass_)
    except PlanError:
        raise
    except Exception as err:
        # _check leaves nothing for here; a slip of it is still one line, not a traceback.
        raise PlanError("the plan %s is malformed (%s: %s)" % (path, type(err).__name__, _line(err)))


# Bounds of a plan's numbers.  A frame number or frame count past 2**31 (over a year of
# video at 60 fps) is no video's; an entry holds at most as many frames as one sample may
# (MAX_INDICES of src/core/sampling.rs), lest one decode be asked to allocate billions.
MAX_FRAME = 2**31
MAX_INDICES = 2**24
# The errors a refusal lists on its one line; the rest are counted.
SHOWN_ERRORS = 3


def _no_constant(name):
    # json accepts NaN and Infinity, which are not JSON and no frame number.
    raise ValueError("%s is not JSON" % name)


def _show(value, limit=80):
    """A value from the plan for a one-line message, as JSON text: line breaks, control
    characters and other non-ASCII escaped, and a long value cut."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def _line(err):
    return " ".join(str(err).split())


def _is_int(value):
    # bool is an int in Python, and 3.0 a float: neither is a JSON integer, and the plans
    # frameaudit writes hold frame numbers as integers only.
    return type(value) is int


def _check(entry):
    """What is wrong with one entry of the plan's ``entries``, as short phrases (none when
    it is well formed)."""
    if not isinstance(entry, dict):
        return ["is %s, not an object" % _KINDS.get(type(entry), "null")]
    errors = []
    # The run's names are printed as they are (the summary, the refusals), so they must
    # print as one line: no control characters.
    for field in ("model", "config", "strategy"):
        value = entry.get(field)
        if not isinstance(value, str) or not value or not value.isprintable():
            errors.append("%s is %s, not a name" % (field, _show(value)))
    if not isinstance(entry.get("video"), str) or not entry.get("video"):
        errors.append("video is %s, not a file name" % _show(entry.get("video")))
    pass_ = entry.get("pass", 0)
    if not _is_int(pass_) or pass_ < 0:
        errors.append("pass is %s, not a whole number 0 or more" % _show(pass_))
    count = entry.get("num_frames")
    if count is not None and (not _is_int(count) or not 0 < count <= MAX_FRAME):
        errors.append("num_frames is %s, not null or a frame count 1 to %d" % (_show(count), MAX_FRAME))
        count = None
    if count:
        end, video = count, "the video's %d frames (num_frames)" % count
    else:
        end, video = MAX_FRAME, "the %d frames a video may have" % MAX_FRAME
    indices = entry.get("indices")
    if not isinstance(indices, list) or not indices:
        errors.append("indices is %s, not a list of frame numbers" % _show(indices))
    elif len(indices) > MAX_INDICES:
        errors.append(
            "indices holds %d frames, more than the %d a sample may" % (len(indices), MAX_INDICES)
        )
    else:
        for k, i in enumerate(indices):
            if not _is_int(i):
                errors.append("indices[%d] is %s, not an integer" % (k, _show(i)))
                break
            if i < 0:
                errors.append("indices[%d] is %s, not a frame number (0 or more)" % (k, _show(i)))
                break
            if i >= end:
                errors.append("indices[%d] is %s, past %s" % (k, _show(i), video))
                break
    return errors


def _select(plan, path, run, strategy, pass_):
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise PlanError("%s is not a frameaudit plan (schema %s)" % (path, SCHEMA))
    if "/" not in run:
        raise PlanError("--run is MODEL/CONFIG, found %r" % run)
    everything = plan.get("entries")
    if not isinstance(everything, list):
        raise PlanError(
            "the plan %s is malformed: entries is %s, not a list" % (path, _show(everything))
        )
    # Every entry is checked, not only the run's: a plan is written whole by frameaudit,
    # and one wrong anywhere says the file is not what it was written as.
    errors = []
    for n, e in enumerate(everything):
        errors.extend("entries[%d]: %s" % (n, why) for why in _check(e))
    if errors:
        more = len(errors) - SHOWN_ERRORS
        raise PlanError(
            "the plan %s is malformed: %s%s"
            % (path, "; ".join(errors[:SHOWN_ERRORS]), "; and %d more" % more if more > 0 else "")
        )
    model, config = run.rsplit("/", 1)
    entries = [e for e in everything if e["model"] == model and e["config"] == config]
    if not entries:
        runs = sorted({"%s/%s" % (e["model"], e["config"]) for e in everything})
        raise PlanError(
            "the plan has no entry for %s; its runs: %s" % (run, ", ".join(runs) or "none")
        )
    strategies = sorted({e["strategy"] for e in entries})
    if strategy is None:
        if len(strategies) > 1:
            raise PlanError(
                "the plan has several strategies for %s (%s): give --strategy"
                % (run, ", ".join(strategies))
            )
        strategy = strategies[0]
    elif strategy not in strategies:
        raise PlanError(
            "the plan has no %s entry for %s; its strategies there: %s"
            % (strategy, run, ", ".join(strategies))
        )
    mine = [e for e in entries if e["strategy"] == strategy]
    passes = sorted({e.get("pass", 0) for e in mine})
    chosen = [e for e in mine if e.get("pass", 0) == pass_]
    if not chosen:
        raise PlanError(
            "the plan has no pass %d for %s (%s); its passes: %s"
            % (pass_, run, strategy, ", ".join(str(p) for p in passes))
        )
    videos = {}
    for e in chosen:
        indices = e["indices"]
        name = match_name(e["video"])
        if name in videos and videos[name][0] != indices:
            raise PlanError(
                "pass %d of %s (%s) plans two frame sets for videos named %s: the recorder "
                "could not tell them apart (make the plan again with this frameaudit)"
                % (pass_, run, strategy, _show(name))
            )
        videos[name] = (indices, strategy, pass_)
    summary = "steering %d video(s) of %s with the %s frames of the plan (pass %d of %d)" % (
        len(videos),
        run,
        strategy,
        pass_,
        len(passes),
    )
    if len(passes) > 1:
        summary += "; the other passes are other runs (--pass N)"
    return videos, summary


def write_selection(videos, log):
    """Writes the checked selection for the run's processes, next to nothing of the user's
    (a private temporary file, removed when the run ends); returns its path."""
    fd, path = tempfile.mkstemp(prefix="frameaudit-plan-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"log": log, "videos": {k: list(v) for k, v in videos.items()}}, f)
    return path


def child_env(env, selection):
    env[ENV_PLAN] = selection


def load():
    """Loads the run's checked selection in this process; returns None when no plan was
    given, else what the process's start line says of it ("applied", or why not)."""
    path = os.environ.get(ENV_PLAN)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        _active["videos"] = {
            k: ([int(i) for i in v[0]], str(v[1]), int(v[2])) for k, v in data["videos"].items()
        }
        return "applied"
    except Exception as err:
        return "not applied: the run's plan selection %s cannot be read (%s)" % (path, err)


def lookup(video):
    """(indices, strategy, pass) planned for the video opened at this path, or None."""
    videos = _active["videos"]
    if not videos or not video:
        return None
    return videos.get(match_name(video))
