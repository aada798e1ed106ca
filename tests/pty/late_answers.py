"""Runs a command on a pseudo-terminal that answers the terminal query late.

Usage: late_answers.py DELAY_S STDERR_FILE [--before KEYS] [--after KEYS] COMMAND...

The command gets a 120x40 pseudo-terminal as its standard input and output. When it asks
the terminal's status (``CSI 5 n``, the end of frameaudit's query), the answers come DELAY_S
seconds later, as a terminal across a slow link would send them. Once the command has
exited, what it left unread on the terminal (what a shell would then read and print) is
read back. `--before` types KEYS as soon as the query is seen (before the answers), `--after`
types KEYS one by one, 0.5 s apart, from 0.5 s after the answers. Prints one JSON object: ``{"status": exit status, "left": unread bytes as text,
"answered_after_exit": bool}``.
"""

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import time
import tty

ANSWERS = b"\x1bP>|slowterm 1.0\x1b\\\x1b[?62;22c\x1b[0n"


def main():
    delay, err_path, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    typed = {"--before": b"", "--after": b""}
    while cmd and cmd[0] in typed:
        typed[cmd[0]] = cmd[1].encode()
        cmd = cmd[2:]
    after = list(typed["--after"])
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env["TERM"] = "xterm-256color"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=err, env=env, start_new_session=True
        )
    seen, answer_at, answered_at, exited_at = b"", None, None, None
    end = time.monotonic() + 20
    while time.monotonic() < end:
        now = time.monotonic()
        if answer_at is not None and answered_at is None and now >= answer_at:
            os.write(master, ANSWERS)
            answered_at = now
        if after and answered_at is not None and exited_at is None:
            if now >= answered_at + 0.5 * (len(typed["--after"]) - len(after) + 1):
                os.write(master, bytes([after.pop(0)]))
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and (answer_at is None or answered_at is not None):
            break
        ready, _, _ = select.select([master], [], [], 0.01)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                pass
            if answer_at is None and b"\x1b[5n" in seen:
                answer_at = time.monotonic() + delay
                os.write(master, typed["--before"])
    status = proc.wait(timeout=20)
    # What is left on the terminal, as the next program to read it would get it.
    tty.setraw(slave)
    os.set_blocking(slave, False)
    left = b""
    try:
        while True:
            chunk = os.read(slave, 4096)
            if not chunk:
                break
            left += chunk
    except BlockingIOError:
        pass
    print(
        json.dumps(
            {
                "status": status,
                "left": left.decode("latin-1"),
                "answered_after_exit": answered_at is not None and exited_at < answered_at,
                "asked": b"\x1b[5n" in seen,
            }
        )
    )


if __name__ == "__main__":
    main()
