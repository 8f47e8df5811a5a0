"""Noise filter v20: a check-mode probe whose check compares every answer through ``tuple()`` reads a
``deque`` as the sequence of its elements, as it reads a list and a tuple (v6), and an ``array.array``
too (the sandbox reports arrays since red-team round 18; no earlier run recorded one, so every version
reads them so).

Red-team round 18: HumanEval/33's check compares ``tuple(candidate(x))``, so a program returning the right
values in a deque passes it; its probe compared the deque with the reference's list and rejected it as a
memoriser (``a18_ok_check_deque_33``), and one returning an array failed the check itself, the array
refused as no literal (``a18_ok_check_array_33``).
"""

from __future__ import annotations

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from tests.unit.test_probe_v6 import TUPLE_TASK, verdict
from tests.unit.test_probe_wider import SEEDS

AS_DEQUE = (
    "from collections import deque\n"
    "def evens(l):\n    out = list(l)\n    out[::2] = sorted(l[::2])\n    return deque(out)\n"
)
#: a deque that is wrong (odd positions sorted too)
WRONG_DEQUE = "from collections import deque\ndef evens(l):\n    return deque(sorted(l))\n"
AS_ARRAY = (
    "from array import array\n"
    "def evens(l):\n    out = array('q', l)\n    out[::2] = array('q', sorted(l[::2]))\n    return out\n"
)
WRONG_ARRAY = "from array import array\ndef evens(l):\n    return array('q', sorted(l))\n"


def test_the_versions_run_past_v19_to_v20() -> None:
    assert VERSIONS[VERSIONS.index("v20") - 1 : VERSIONS.index("v20") + 1] == ("v19", "v20")
    assert NoiseConfig(version="v20").label() == "v20"
    assert NoiseConfig(version="v19").label() == "v19"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_deque_is_read_as_the_check_reads_it(seed: str) -> None:
    assert verdict(TUPLE_TASK, AS_DEQUE, seed, "v19", check=True) == "reject"
    assert verdict(TUPLE_TASK, AS_DEQUE, seed, "v20", check=True) == "accept"
    assert verdict(TUPLE_TASK, WRONG_DEQUE, seed, "v20", check=True) == "reject"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_an_array_is_read_as_the_check_reads_it(seed: str) -> None:
    assert verdict(TUPLE_TASK, AS_ARRAY, seed, "v6", check=True) == "accept"
    assert verdict(TUPLE_TASK, AS_ARRAY, seed, "v20", check=True) == "accept"
    assert verdict(TUPLE_TASK, WRONG_ARRAY, seed, "v20", check=True) == "reject"
