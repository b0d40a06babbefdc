#!/usr/bin/env python3
"""Turn kunit.py's JSON into softhca result lines: one per leaf test case
(a parameterised case counts each parameter), as 'PASS|FAIL|SKIP name'."""
import json
import sys

STATUS = {"PASS": "PASS", "SKIP": "SKIP"}


def leaves(group, path):
    for case in group.get("test_cases", []):
        yield path + [case["name"]], case["status"]
    for sub in group.get("sub_groups", []):
        yield from leaves(sub, path + [sub["name"]])


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    for path, status in leaves(doc, ["kunit"]):
        print(STATUS.get(status, "FAIL"), "/".join(path).replace(" ", "_"))


if __name__ == "__main__":
    main()
