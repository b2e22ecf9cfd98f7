# mypy: disable-error-code="no-untyped-def,no-untyped-call,type-arg,var-annotated"
# (a stdlib-only program shipped into the sandbox, typed loosely like sandbox/_driver.py)
"""The LDB tracer: runs INSIDE the sandbox, in the candidate's own process, never in the judge.

``python3 ldb_trace.py <entry> <max_events> <value_chars>`` loads ``solution.py`` (the
candidate) and runs ``test.py`` (ONE of the model's own self-tests, never a hidden
test) under ``sys.settrace``, recording for every executed line of the candidate's
code the line number and the repr of the frame's locals *before* the line runs, plus
each return value. Output: one line ``LDB-TRACE <json>`` with the (bounded) events,
how many were dropped and how the test ended. Everything is bounded here (events kept,
characters per value) and again by the sandbox's output limit; the candidate can
print or forge anything it likes, which only misleads its own debugging: nothing
here reaches a verdict.
"""

import json
import sys

MARK = "LDB-TRACE "


def _short(value, limit):
    try:
        text = repr(value)
    except BaseException:
        text = "<unprintable>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main():
    entry = sys.argv[1]
    max_events = int(sys.argv[2])
    value_chars = int(sys.argv[3])
    with open("solution.py", encoding="utf-8") as fh:
        program = fh.read()
    with open("test.py", encoding="utf-8") as fh:
        test = fh.read()
    out = sys.stdout
    events = []
    counts = {"seen": 0}
    head = max_events // 2

    def record(ev):
        counts["seen"] += 1
        if len(events) < max_events:
            events.append(ev)
        else:
            # Keep the first half and a sliding window of the last half (LDB shows the
            # start and the end of a long run).
            del events[head]
            events.append(ev)

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != "solution.py":
            return None
        if event == "line":
            local = {k: _short(v, value_chars) for k, v in list(frame.f_locals.items())[:12]}
            record({"fn": frame.f_code.co_name, "line": frame.f_lineno, "locals": local})
        elif event == "return":
            record(
                {
                    "fn": frame.f_code.co_name,
                    "line": frame.f_lineno,
                    "return": _short(arg, value_chars),
                }
            )
        elif event == "exception":
            record(
                {
                    "fn": frame.f_code.co_name,
                    "line": frame.f_lineno,
                    "raised": _short(arg[1], value_chars),
                }
            )
        return tracer

    ns = {"__name__": "solution"}
    outcome = "passed"
    try:
        exec(compile(program, "solution.py", "exec"), ns)
        if entry not in ns:
            outcome = f"the program defines no `{entry}`"
        else:
            sys.settrace(tracer)
            try:
                exec(compile(test, "test.py", "exec"), ns)
            finally:
                sys.settrace(None)
    except AssertionError:
        outcome = "assertion failed"
    except BaseException as exc:
        outcome = _short(f"{type(exc).__name__}: {exc}", 300)
    dropped = max(0, counts["seen"] - len(events))
    out.write(MARK + json.dumps({"events": events, "dropped": dropped, "outcome": outcome}) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
