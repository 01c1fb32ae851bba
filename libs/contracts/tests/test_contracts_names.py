"""`platform_contracts.names`: what each rule takes, and that Python's `re` and pydantic's Rust
regex engine (which checks the gateway's request bodies) read each pattern the same way."""

from __future__ import annotations

import re

import pydantic
import pytest
from platform_contracts import names

LIFE_CASES = {
    "robot-1": True, "a": True, "R2.D2_x-y": True, "x" * 64: True,
    ".": False, "..": False, ".hidden": False, "_a": False, "-a": False, "": False, "x" * 65: False,
    "robot 1": False, "a/b": False, "é": False, "robot-1\n": False,
}
LABEL_CASES = {
    "": True, "before the swing": True, "compare: after 500 warm-up steps": True, "é 漢字 🙂 – “quoted”": True,
    "x" * 200: True,
    "a\x00b": False, "tab\there": False, "new\nline": False, "\x7f": False, "\x85": False,
    "fine\u202eenif": False, "\u2066isolate\u2069": False, "zero\u200bwidth": False, "\ufeffbom": False,
    "line\u2028sep": False, "soft\xadhyphen": False,
}
WAD_CASES = {
    "memory_test.wad": True, "My Map (v2)+.WAD": True, "a" * 96 + ".wad": True,
    "a" * 97 + ".wad": False, "map.wad\n": False, ".hidden.wad": False, "maps.zip": False, "dir/map.wad": False, "map.wad ": False,
}


@pytest.mark.parametrize("name, ok", LIFE_CASES.items())
def test_life_names_begin_with_a_letter_or_digit_so_never_dot_or_dotdot(name: str, ok: bool) -> None:
    assert bool(names.LIFE_NAME.fullmatch(name)) is ok


@pytest.mark.parametrize("label, ok", LABEL_CASES.items())
def test_labels_refuse_controls_separators_and_invisible_formatting(label: str, ok: bool) -> None:
    ok_by_pattern = bool(names.LABEL.fullmatch(label)) and len(label) <= names.MAX_LABEL_LENGTH
    assert ok_by_pattern is ok
    problem = names.label_problem(label)
    assert (problem is None) is ok
    if problem is not None and len(label) <= names.MAX_LABEL_LENGTH:
        bad = next(c for c in label if not names.LABEL.fullmatch(c))
        assert f"U+{ord(bad):04X}" in problem


def test_a_label_too_long_says_its_length() -> None:
    assert "201 characters" in (names.label_problem("x" * 201) or "")


@pytest.mark.parametrize("name, ok", WAD_CASES.items())
def test_wad_names(name: str, ok: bool) -> None:
    assert bool(names.WAD_NAME.fullmatch(name)) is ok


@pytest.mark.parametrize("pattern, cases", [
    (names.LIFE_NAME_PATTERN, LIFE_CASES), (names.LABEL_PATTERN, LABEL_CASES), (names.WAD_NAME_PATTERN, WAD_CASES),
])
def test_pydantic_reads_each_pattern_as_python_does(pattern: str, cases: dict[str, bool]) -> None:
    adapter = pydantic.TypeAdapter(pydantic.constr(pattern=pattern))
    for text in cases:
        try:
            adapter.validate_python(text)
            by_pydantic = True
        except pydantic.ValidationError:
            by_pydantic = False
        assert by_pydantic is bool(re.fullmatch(pattern, text)), text
