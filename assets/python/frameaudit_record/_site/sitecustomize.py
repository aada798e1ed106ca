# frameaudit_record's sitecustomize: `python3 -m frameaudit_record` puts this folder first
# on PYTHONPATH, so every Python process of the recorded run loads it at startup.  It
# installs the frame recorder (lazy import hooks, see frameaudit_record/_record.py), then
# runs the sitecustomize that would have run without it, if there is one.
# Kept to syntax any Python 3 parses.


def _frameaudit_install():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    if sys.version_info >= (3, 6):
        parent = os.path.dirname(os.path.dirname(here))
        if parent not in sys.path:
            sys.path.append(parent)
        # Our own modules leave no __pycache__ behind in the frameaudit checkout.
        saved = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        try:
            from frameaudit_record import _record

            _record.start()
        except Exception as err:
            try:
                sys.stderr.write(
                    "frameaudit_record: warning: the frame recorder did not start (%s: %s)\n"
                    % (type(err).__name__, err)
                )
            except Exception:
                pass
        finally:
            sys.dont_write_bytecode = saved
    return here


def _frameaudit_chain(here):
    """Runs the next sitecustomize on sys.path, as site.py would have without us."""
    import os
    import sys
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    def same(entry):
        try:
            return os.path.samefile(entry or os.curdir, here)
        except OSError:
            return False

    # Only the entries after this folder: a sitecustomize before it would have been the
    # one imported, and another copy of this file (a recorder run inside a recorder run)
    # then chains on from its own place, never back here.
    entries = [p for p in sys.path if isinstance(p, str)]
    mine = [i for i, p in enumerate(entries) if same(p)]
    rest = [p for p in entries[mine[0] + 1 if mine else 0 :] if not same(p)]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    # Errors propagate to site.py, which reports them as it always does.
    spec.loader.exec_module(module)


_frameaudit_chain(_frameaudit_install())
