"""Frame plans (docs/intervention.md): which frames to hand the harness instead of those it
asks for, by video, for one run of a plan made by ``frameaudit intervene plan``.

The recorder's main process checks the plan and the run (``select``); every recorded
process then loads the same selection from the environment (``load``) and looks each
decode's video up in it (``lookup``).  Standard library only.
"""

import json
import os

ENV_PLAN = "FRAMEAUDIT_RECORD_PLAN"
ENV_RUN = "FRAMEAUDIT_RECORD_RUN"
ENV_STRATEGY = "FRAMEAUDIT_RECORD_STRATEGY"
ENV_PASS = "FRAMEAUDIT_RECORD_PASS"
SCHEMA = "frameaudit/plan@1"

# video name (with and without extension) -> (indices, strategy, pass); None: no plan
_active = {"videos": None}


class PlanError(Exception):
    pass


def _names(video):
    base = os.path.basename(video.rstrip("/"))
    stem, _ = os.path.splitext(base)
    return {base, stem} if stem else {base}


def select(path, run, strategy=None, pass_=0):
    """The plan's entries for RUN (MODEL/CONFIG), one strategy, one pass: a dict of video
    name -> (indices, strategy, pass), and a one-line summary.  PlanError says why not."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
    except (OSError, ValueError) as err:
        raise PlanError("cannot read the plan %s: %s" % (path, err))
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise PlanError("%s is not a frameaudit plan (schema %s)" % (path, SCHEMA))
    if "/" not in run:
        raise PlanError("--run is MODEL/CONFIG, found %r" % run)
    model, config = run.rsplit("/", 1)
    entries = [
        e
        for e in plan.get("entries") or []
        if isinstance(e, dict) and e.get("model") == model and e.get("config") == config
    ]
    if not entries:
        runs = sorted({"%s/%s" % (e.get("model"), e.get("config")) for e in plan.get("entries") or []})
        raise PlanError(
            "the plan has no entry for %s; its runs: %s" % (run, ", ".join(runs) or "none")
        )
    strategies = sorted({e.get("strategy") for e in entries})
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
    mine = [e for e in entries if e.get("strategy") == strategy]
    passes = sorted({int(e.get("pass", 0)) for e in mine})
    chosen = [e for e in mine if int(e.get("pass", 0)) == pass_]
    if not chosen:
        raise PlanError(
            "the plan has no pass %d for %s (%s); its passes: %s"
            % (pass_, run, strategy, ", ".join(str(p) for p in passes))
        )
    videos = {}
    for e in chosen:
        indices = [int(i) for i in e.get("indices") or []]
        for name in _names(str(e.get("video") or "")):
            videos[name] = (indices, strategy, pass_)
    summary = "steering %d video(s) of %s with the %s frames of the plan (pass %d of %d)" % (
        len(chosen),
        run,
        strategy,
        pass_,
        len(passes),
    )
    if len(passes) > 1:
        summary += "; the other passes are other runs (--pass N)"
    return videos, summary


def child_env(env, path, run, strategy, pass_):
    env[ENV_PLAN] = os.path.abspath(path)
    env[ENV_RUN] = run
    env[ENV_STRATEGY] = strategy or ""
    env[ENV_PASS] = str(pass_)


def load():
    """Loads the run's selection in this process, if the recorder was given a plan."""
    path = os.environ.get(ENV_PLAN)
    if not path:
        return
    strategy = os.environ.get(ENV_STRATEGY) or None
    videos, _ = select(path, os.environ.get(ENV_RUN, ""), strategy, int(os.environ.get(ENV_PASS, "0")))
    _active["videos"] = videos


def lookup(video):
    """(indices, strategy, pass) planned for the video opened at this path, or None."""
    videos = _active["videos"]
    if not videos or not video:
        return None
    base = os.path.basename(video)
    stem, _ = os.path.splitext(base)
    return videos.get(base) or videos.get(stem)
