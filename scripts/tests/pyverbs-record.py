#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rdma-core's python suite, as its run_tests.py runs it, with each test's
outcome also written to the file named by $PYVERBS_RECORD: one line per
test, "<test id> <ok|skip|fail|error|xfail|xpass>".  Copied into the
suite's tests/ directory and run from its parent, like run_tests.py."""

import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

from args_parser import parser


class Recorder(unittest.TextTestResult):
    """A verbose text result that also keeps each test's outcome."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcomes[test.id()] = 'ok'

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcomes[test.id()] = 'skip'

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes[test.id()] = 'fail'

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes[test.id()] = 'error'

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.outcomes[test.id()] = 'xfail'

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.outcomes[test.id()] = 'xpass'


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    tests = SourceFileLoader('tests', os.path.join(here, '__init__.py')) \
        .load_module()
    parser.parse_args()
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Recorder)
    prog = unittest.main(module=tests, testRunner=runner, exit=False)
    with open(os.environ['PYVERBS_RECORD'], 'w', encoding='ascii') as out:
        for test_id, outcome in sorted(prog.result.outcomes.items()):
            out.write(f'{test_id} {outcome}\n')
    sys.exit(0 if prog.result.wasSuccessful() else 1)


if __name__ == '__main__':
    main()
