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
    name -> (indices, strategy, pass), and a one-line summary.  PlanError says why not."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
    except (OSError, ValueError) as err:
        raise PlanError("cannot read the plan %s: %s" % (path, err))
    try:
        return _select(plan, path, run, strategy, pass_)
    except (TypeError, ValueError, AttributeError) as err:
        raise PlanError("the plan %s is malformed (%s)" % (path, err))


def _select(plan, path, run, strategy, pass_):
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise PlanError("%s is not a frameaudit plan (schema %s)" % (path, SCHEMA))
    if "/" not in run:
        raise PlanError("--run is MODEL/CONFIG, found %r" % run)
    model, config = run.rsplit("/", 1)
    everything = [e for e in plan.get("entries") or [] if isinstance(e, dict)]
    entries = [e for e in everything if e.get("model") == model and e.get("config") == config]
    if not entries:
        runs = sorted({"%s/%s" % (e.get("model"), e.get("config")) for e in everything})
        raise PlanError(
            "the plan has no entry for %s; its runs: %s" % (run, ", ".join(runs) or "none")
        )
    strategies = sorted({str(e.get("strategy")) for e in entries})
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
    mine = [e for e in entries if str(e.get("strategy")) == strategy]
    passes = sorted({int(e.get("pass") or 0) for e in mine})
    chosen = [e for e in mine if int(e.get("pass") or 0) == pass_]
    if not chosen:
        raise PlanError(
            "the plan has no pass %d for %s (%s); its passes: %s"
            % (pass_, run, strategy, ", ".join(str(p) for p in passes))
        )
    videos = {}
    for e in chosen:
        indices = [int(i) for i in e.get("indices") or []]
        name = match_name(e.get("video") or "")
        if name in videos and videos[name][0] != indices:
            raise PlanError(
                "pass %d of %s (%s) plans two frame sets for videos named %r: the recorder "
                "could not tell them apart (make the plan again with this frameaudit)"
                % (pass_, run, strategy, name)
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
