"""TAP output for the Python tests: ok(cond, name), then done()."""
import sys
import traceback

_n = 0
_failed = 0


def ok(cond, name, detail=""):
    global _n, _failed
    _n += 1
    if cond:
        print(f"ok {_n} - {name}")
    else:
        _failed += 1
        print(f"not ok {_n} - {name}")
        if detail:
            for line in str(detail).splitlines()[:8]:
                print(f"#   {line}")
    sys.stdout.flush()


def raises(fn, exc, name):
    try:
        fn()
    except exc as e:
        ok(True, name)
        return e
    except Exception:
        ok(False, name, traceback.format_exc())
        return None
    ok(False, name, "no exception")
    return None


def done():
    print(f"1..{_n}")
    sys.exit(1 if _failed else 0)
