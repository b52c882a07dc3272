"""Run the host unit tests and print one KTAP result per test (case 02):
    PYTHONPATH=rig python3 test/host/ktap.py
Exit status 0 when every test passed."""

import os
import sys
import unittest


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.lines = []

    def _add(self, test, ok, directive=""):
        name = test.id().split(".", 1)[-1]
        self.lines.append(f"{'ok' if ok else 'not ok'} {len(self.lines) + 1} {name}"
                          + (f" # {directive}" if directive else ""))
        print(self.lines[-1], flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, False, "FAIL")
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, False, "ERROR")
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, True, f"SKIP {reason}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here)
    print("KTAP version 1")
    print(f"1..{suite.countTestCases()}")
    r = Result()
    suite.run(r)
    return 0 if r.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
