"""python3 -m frameaudit_record --log FILE -- COMMAND [ARGS...]"""

import os
import signal
import subprocess
import sys

from . import RECORDER, _log

USAGE = """\
usage: python3 -m frameaudit_record --log FILE -- COMMAND [ARGS...]

Runs COMMAND (an evaluation harness: python3 -m lmms_eval ..., accelerate launch ...,
torchrun ..., python run.py ... for VLMEvalKit) and logs, for every video decode in
every Python process it starts, which frame indices were read. The log is JSON Lines,
appended to FILE; frameaudit imports it. COMMAND's output and exit status are its own.

options:
  --log FILE   the frames log to append to (created if absent)
  -h, --help   show this help and exit
  --version    show the recorder's version and exit

Run it with this package on PYTHONPATH:
  PYTHONPATH=<frameaudit>/assets/python python3 -m frameaudit_record --log frames.jsonl \\
      -- python3 -m lmms_eval --model llava_vid --tasks videomme ...
The log format and the readers recorded exactly: docs/recorder.md.
"""

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")


class UsageError(Exception):
    pass


def parse(argv):
    """-> (log, command), or None for --help/--version (already printed)."""
    if "--" in argv:
        split = argv.index("--")
        options, command = argv[:split], argv[split + 1 :]
    else:
        options, command = argv, None
    log = None
    i = 0
    while i < len(options):
        arg = options[i]
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return None
        if arg == "--version":
            sys.stdout.write(RECORDER + "\n")
            return None
        if arg == "--log" or arg.startswith("--log="):
            if arg == "--log":
                if i + 1 >= len(options):
                    raise UsageError("--log needs a FILE")
                log = options[i + 1]
                i += 1
            else:
                log = arg[len("--log=") :]
            if not log:
                raise UsageError("--log needs a FILE")
        elif command is None:
            raise UsageError("missing `--` before COMMAND (at %s)" % arg)
        else:
            raise UsageError("unknown option %s" % arg)
        i += 1
    if log is None:
        raise UsageError("--log FILE is required")
    if command is None:
        raise UsageError("missing `--` before COMMAND")
    if not command:
        raise UsageError("no COMMAND after `--`")
    return os.path.abspath(log), command


def child_env(log):
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    # An empty PYTHONPATH adds nothing; "SITE:" would add the current directory.
    env["PYTHONPATH"] = SITE + os.pathsep + old if old else SITE
    env[_log.ENV_LOG] = log
    return env


def run(log, command):
    """Runs COMMAND; returns the recorder's exit status (COMMAND's own)."""
    cwd = os.getcwd()
    recording = _log.write(
        {
            "schema": _log.SCHEMA,
            "event": "run",
            "command": command,
            "cwd": cwd,
            "at": _log.now(),
            "recorder": RECORDER,
        },
        path=log,
        quiet=True,
    )
    if recording:
        env = child_env(log)
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

    status = code if code >= 0 else 128 - code
    if recording:
        _log.write({"event": "end", "status": status, "at": _log.now()}, path=log)
    if code < 0:
        # COMMAND died of a signal: die of the same one, as a shell would see it.
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return status


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
