"""frameaudit_record: log which frames a Video LLM evaluation harness decodes.

Run a harness under the recorder:

    PYTHONPATH=<frameaudit>/assets/python python3 -m frameaudit_record --log FILE -- COMMAND [ARGS...]

Every Python process that COMMAND starts loads the recorder through a
``sitecustomize`` module, wraps the video readers when the harness imports them,
and appends one JSON line to FILE per decode.  Standard library only; see
docs/recorder.md for the log format and the readers that are recorded exactly.

This module is imported by every recorded process, so it imports nothing itself.
"""

__version__ = "1"
RECORDER = "frameaudit_record " + __version__
