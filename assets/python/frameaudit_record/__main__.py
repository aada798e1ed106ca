"""python3 -m frameaudit_record --log FILE [--plan PLAN --run MODEL/CONFIG] -- COMMAND [ARGS...]"""

import json
import os
import signal
import subprocess
import sys

from . import RECORDER, _log, _plan

USAGE = """\
usage: python3 -m frameaudit_record --log FILE [--plan PLAN --run MODEL/CONFIG
           [--strategy S] [--pass N]] -- COMMAND [ARGS...]

Runs COMMAND (an evaluation harness: python3 -m lmms_eval ..., accelerate launch ...,
torchrun ..., python run.py ... for VLMEvalKit) and logs, for every video decode in
every Python process it starts, which frame indices were read. The log is JSON Lines,
appended to FILE; frameaudit imports it. COMMAND's output and exit status are its own.

options:
  --log FILE         the frames log to append to (created if absent)
  --plan PLAN        a plan of `frameaudit intervene plan`: the videos it names for the
                     run are decoded at the planned frames instead (decord get_batch)
  --run MODEL/CONFIG the plan's run this command is (its model and configuration)
  --strategy S       the plan's strategy, when it has several for the run
  --pass N           the plan's pass (default 0; docs/intervention.md)
  -h, --help         show this help and exit
  --version          show the recorder's version and exit

Run it with this package on PYTHONPATH:
  PYTHONPATH=<frameaudit>/assets/python python3 -m frameaudit_record --log frames.jsonl \\
      -- python3 -m lmms_eval --model llava_vid --tasks videomme ...
The log format and the readers recorded exactly: docs/recorder.md.
"""

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")


class UsageError(Exception):
    pass


def parse(argv):
    """-> (log, command, plan), plan a dict or None; or None for --help/--version."""
    if "--" in argv:
        split = argv.index("--")
        options, command = argv[:split], argv[split + 1 :]
    else:
        options, command = argv, None
    values = {"log": None, "plan": None, "run": None, "strategy": None, "pass": None}
    metavar = {"log": "FILE", "plan": "PLAN", "run": "MODEL/CONFIG", "strategy": "S", "pass": "N"}
    i = 0
    while i < len(options):
        arg = options[i]
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return None
        if arg == "--version":
            sys.stdout.write(RECORDER + "\n")
            return None
        name = arg[2:].split("=", 1)[0] if arg.startswith("--") else None
        if name in values:
            if "=" in arg:
                value = arg.split("=", 1)[1]
            else:
                if i + 1 >= len(options):
                    raise UsageError("--%s needs a %s" % (name, metavar[name]))
                value = options[i + 1]
                i += 1
            if not value:
                raise UsageError("--%s needs a %s" % (name, metavar[name]))
            values[name] = value
        elif command is None:
            raise UsageError("missing `--` before COMMAND (at %s)" % arg)
        else:
            raise UsageError("unknown option %s" % arg)
        i += 1
    if values["log"] is None:
        raise UsageError("--log FILE is required")
    if command is None:
        raise UsageError("missing `--` before COMMAND")
    if not command:
        raise UsageError("no COMMAND after `--`")
    plan = None
    if values["plan"] is not None:
        if values["run"] is None:
            raise UsageError("--plan needs --run MODEL/CONFIG: which of the plan's runs this is")
        try:
            pass_ = int(values["pass"] or 0)
        except ValueError:
            raise UsageError("--pass is a number, found %r" % values["pass"])
        plan = {"path": values["plan"], "run": values["run"], "strategy": values["strategy"], "pass": pass_}
    elif values["run"] or values["strategy"] or values["pass"]:
        raise UsageError("--run, --strategy and --pass go with --plan PLAN")
    return os.path.abspath(values["log"]), command, plan


def child_env(log):
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    # An empty PYTHONPATH adds nothing; "SITE:" would add the current directory.
    env["PYTHONPATH"] = SITE + os.pathsep + old if old else SITE
    env[_log.ENV_LOG] = log
    return env


def run(log, command, plan=None):
    """Runs COMMAND; returns the recorder's exit status (COMMAND's own)."""
    cwd = os.getcwd()
    strategy = None
    if plan is not None:
        # Checked before the command runs: a plan that does not apply is no run at all.
        try:
            videos, summary = _plan.select(plan["path"], plan["run"], plan["strategy"], plan["pass"])
        except _plan.PlanError as err:
            sys.stderr.write("frameaudit_record: %s\n" % err)
            return 2
        strategy = next(iter(videos.values()))[1]
    line = {
        "schema": _log.SCHEMA,
        "event": "run",
        "command": command,
        "cwd": cwd,
        "at": _log.now(),
        "recorder": RECORDER,
    }
    if plan is not None:
        line["plan"] = {
            "path": os.path.abspath(plan["path"]),
            "run": plan["run"],
            "strategy": strategy,
            "pass": plan["pass"],
        }
    start = _size(log)
    recording = _log.write(line, path=log, quiet=True)
    selection = None
    if recording:
        env = child_env(log)
        if plan is not None:
            # Said once the run is sure to start: a run refused below steers nothing.
            sys.stderr.write("frameaudit_record: %s\n" % summary)
            sys.stderr.flush()
            selection = _plan.write_selection(videos, log)
            _plan.child_env(env, selection)
    elif plan is not None:
        # A planned run without its log would give the model frames nobody could trace.
        sys.stderr.write(
            "frameaudit_record: cannot write the frames log %s (%s); a run with a plan is "
            "not started without it\n" % (log, _log.last_error())
        )
        return 2
    else:
        sys.stderr.write(
            "frameaudit_record: warning: cannot write the frames log %s (%s); "
            "running the command without recording\n" % (log, _log.last_error())
        )
        sys.stderr.flush()
        env = None

    # Ctrl-C and Ctrl-\ reach COMMAND from the terminal; the recorder waits for it.
    # TERM and HUP sent to the recorder are passed on.
    previous = {}
    for sig in (signal.SIGINT, signal.SIGQUIT):
        previous[sig] = signal.signal(sig, signal.SIG_IGN)
    try:
        try:
            child = subprocess.Popen(command, env=env, restore_signals=True, preexec_fn=_default_signals)
        except OSError as err:
            sys.stderr.write("frameaudit_record: cannot run %s: %s\n" % (command[0], err.strerror or err))
            status = 126 if isinstance(err, PermissionError) else 127
            _remove(selection)
            if recording:
                _log.write({"event": "end", "status": status, "at": _log.now()}, path=log)
            return status

        def forward(sig, frame):
            try:
                child.send_signal(sig)
            except OSError:
                pass

        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, forward)
        code = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    _remove(selection)
    status = code if code >= 0 else 128 - code
    if recording:
        _log.write({"event": "end", "status": status, "at": _log.now()}, path=log)
    if selection is not None:
        _say_steered(log, start, len(videos))
    if code < 0:
        # COMMAND died of a signal: die of the same one, as a shell would see it.
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return status


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _say_steered(log, start, planned):
    """Says how many of the run's decodes the plan steered, from the log's lines past
    ``start`` (this run's), and warns when none was: the harness then decoded its own
    frames throughout, and the import keeps no answer of the run."""
    steered, refused, videos = 0, 0, set()
    try:
        with open(log, "rb") as f:
            f.seek(start)
            for raw in f:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict) or line.get("event") != "decode":
                    continue
                if line.get("planned") is True:
                    steered += 1
                    videos.add(str(line.get("video")))
                elif line.get("refused") is not None:
                    refused += 1
    except OSError as err:
        sys.stderr.write(
            "frameaudit_record: warning: cannot read the frames log back to count the "
            "steered decodes (%s)\n" % (err.strerror or err)
        )
        return
    if steered:
        sys.stderr.write(
            "frameaudit_record: %d decode(s) of %d video(s) got the plan's frames (%d "
            "video(s) planned)%s\n"
            % (steered, len(videos), planned, "; %d refused" % refused if refused else "")
        )
    else:
        sys.stderr.write(
            "frameaudit_record: warning: no decode got the plan's frames (%d video(s) "
            "planned%s): only decord's get_batch is steered, and a harness that reads "
            "frame by frame (InternVL's wrappers) or picks its frames after decoding "
            "(lmms-eval's qwen2_vl) is not; the import keeps no answer of this run "
            "(docs/recorder.md)\n" % (planned, ", %d refused" % refused if refused else "")
        )
    sys.stderr.flush()


def _remove(path):
    if path is not None:
        try:
            os.remove(path)
        except OSError:
            pass


def _default_signals():
    # COMMAND starts with the default dispositions, not the recorder's SIG_IGN.
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        parsed = parse(argv)
    except UsageError as err:
        sys.stderr.write("frameaudit_record: %s\n\n%s" % (err, USAGE))
        return 2
    if parsed is None:
        return 0
    return run(*parsed)


if __name__ == "__main__":
    sys.exit(main())
