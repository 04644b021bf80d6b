"""pytest imports test modules by their basename (rootdir-relative, no packages under tests/): two test files of
one name in different folders break the collection of the second ("import file mismatch"). It happened once
(tests/traces/statistical/test_recovery.py against tests/models/test_recovery.py); this keeps it from again."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_has_a_name_of_its_own():
    where = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
