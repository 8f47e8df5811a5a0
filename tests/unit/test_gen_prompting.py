"""Prompt rendering and code extraction: what the sandbox will execute for a completion."""

from __future__ import annotations

import ast

import pytest

from producers.generator.models import build_tiny
from producers.generator.prompting import PromptTemplate, build_prompt, code_end, extract_code, template_for

PROMPT = 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """Sum of xs."""\n'


def test_fenced_block_defining_the_entry_point_gets_the_prompt_imports() -> None:
    completion = "Here you go:\n```python\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n```\nDone."
    got = extract_code(completion, PROMPT, "total")
    assert got.method == "fenced+header"
    assert got.code.startswith("from typing import List")
    assert "return sum(xs)" in got.code and "Done" not in got.code
    ast.parse(got.code)


def test_the_block_that_defines_the_entry_point_wins_over_an_example_block() -> None:
    completion = (
        "```python\nprint(total([1]))\n```\n\n```python\nfrom typing import List\n"
        "def total(xs):\n    return sum(xs)\n```"
    )
    got = extract_code(completion, PROMPT, "total")
    assert got.method == "fenced"
    assert "print" not in got.code and "def total" in got.code


def test_unterminated_fence_is_cut_back_to_what_parses() -> None:
    completion = (
        "```python\ndef total(xs):\n    out = 0\n    for x in xs:\n        out += x\n    return out\n    if ("
    )
    got = extract_code(completion, PROMPT, "total")
    assert got.method.startswith("fenced") and got.method.endswith("+trimmed")
    assert got.parses and got.code.rstrip().endswith("return out")


def test_bare_body_completes_the_prompt_signature_and_drops_trailing_script() -> None:
    completion = "    return sum(xs)\n\n\nprint(total([1, 2]))\nassert total([]) == 0\n"
    got = extract_code(completion, PROMPT, "total")
    assert got.method == "body"
    assert got.code == PROMPT + "    return sum(xs)\n"


def test_unfenced_function_keeps_helpers_and_imports_but_not_prose() -> None:
    completion = (
        "Sure.\nimport math\n\ndef helper(x):\n    return x\n\n"
        "def total(xs):\n    return sum(map(helper, xs))\n"
        "This sums the list.\n"
    )
    got = extract_code(completion, PROMPT, "total")
    assert got.method == "function+header"
    assert "import math" in got.code and "This sums" not in got.code
    ast.parse(got.code)


def test_empty_completion_leaves_the_prompt_stub() -> None:
    assert extract_code("", PROMPT, "total").method == "none"


@pytest.fixture(scope="module")
def tiny_tokenizer():
    return build_tiny(0)[1]


def test_completion_style_prompt_is_the_task_prompt_itself(tiny_tokenizer) -> None:
    assert template_for(tiny_tokenizer).style == "completion"
    assert build_prompt(tiny_tokenizer, PROMPT) == PROMPT


def test_chat_style_renders_the_tokenizers_template(tiny_tokenizer) -> None:
    tiny_tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    try:
        rendered = build_prompt(tiny_tokenizer, PROMPT)
    finally:
        tiny_tokenizer.chat_template = None
    assert rendered.startswith("<|im_start|>system\n")
    assert "def total(xs: List[int]) -> int:" in rendered
    assert rendered.endswith("<|im_start|>assistant\n")
    assert build_prompt(tiny_tokenizer, PROMPT, PromptTemplate(style="completion")) == PROMPT


SMOLLM_ANSWER = (
    "```python\ndef add_one(x: int) -> int:\n    return x + 1\n```\n\n"
    "The built-in `add_one` function takes an integer `x` and returns `x + 1`.\n"
)


def test_a_fenced_program_ends_at_its_closing_fence() -> None:
    end = code_end(SMOLLM_ANSWER)
    assert end is not None
    assert SMOLLM_ANSWER[:end].endswith("    return x + 1\n```\n")
    assert extract_code(SMOLLM_ANSWER[:end], "def add_one(x: int) -> int:\n", "add_one") == extract_code(
        SMOLLM_ANSWER, "def add_one(x: int) -> int:\n", "add_one"
    )


def test_nothing_ends_before_a_body_or_inside_an_unfinished_line() -> None:
    assert code_end("Here is the function:\n```python\nimport math\n") is None
    assert code_end("```python\ndef f(x):\n    return x\n``") is None  # the fence line is not complete
    assert code_end("```python\n```\n") is None  # an empty block is no program
    assert code_end("") is None


def test_a_top_level_script_line_after_the_body_ends_the_program_before_it() -> None:
    text = "```python\ndef f(x):\n    return x * 2\n\n\nprint(f(3))  # 6\n"
    end = code_end(text)
    assert end is not None and text[:end] == "```python\ndef f(x):\n    return x * 2\n\n\n"
    helper = "def f(x):\n    return g(x)\n\ndef g(x):\n    return x\n\nassert f(1) == 1\n"
    end = code_end(helper)
    assert end is not None and helper[:end].endswith("    return x\n\n")
    guard = "def f():\n    return 1\nif __name__ == '__main__':\n"
    assert guard[: code_end(guard)] == "def f():\n    return 1\n"


def test_a_completion_style_body_ends_at_the_first_top_level_statement() -> None:
    body = "    total = 0\n    for x in xs:\n        total += x\n    return total\nprint(total)\n"
    end = code_end(body)
    assert end is not None and body[:end] == body[: body.index("print")]
