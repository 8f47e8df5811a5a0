"""Prompt templates per model and code extraction from completions.

Two prompt styles:

* ``chat`` (instruction-tuned models with a chat template, e.g. smollm2): a system line and a user turn
  asking to complete the function, rendered by the tokenizer's own chat template; the answer is
  expected as a fenced ``python`` block.
* ``completion`` (base models without a chat template, e.g. tiny): the task prompt itself, so the model
  continues the function body.

:func:`extract_code` turns a completion into what the sandbox executes and says how it did it; both the
raw completion and the extracted code are recorded in ``CodeGenerated`` so an audit sees both.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Literal

from schemas import pyast

PromptStyle = Literal["chat", "completion"]

SYSTEM_PROMPT = "You are an expert Python programmer. Answer with Python code only."
USER_TEMPLATE = (
    "Complete the following Python function. Return the whole function, with its imports, "
    "in one ```python code block.\n\n```python\n{prompt}\n```"
)


@dataclass(frozen=True)
class PromptTemplate:
    style: PromptStyle
    system: str | None = SYSTEM_PROMPT
    user_template: str = USER_TEMPLATE


def template_for(tokenizer: Any) -> PromptTemplate:
    """The template a model is prompted with: chat when its tokenizer has a chat template."""
    return PromptTemplate(style="chat" if getattr(tokenizer, "chat_template", None) else "completion")


def build_prompt(tokenizer: Any, task_prompt: str, template: PromptTemplate | None = None) -> str:
    """The exact text fed to the model for one task prompt (a signature plus docstring)."""
    template = template or template_for(tokenizer)
    if template.style == "completion":
        return task_prompt
    messages = []
    if template.system:
        messages.append({"role": "system", "content": template.system})
    messages.append(
        {"role": "user", "content": template.user_template.format(prompt=task_prompt.strip("\n"))}
    )
    rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return str(rendered)


# --- later turns of an episode ----------------------------------------------------------------------

#: what the next turn is asked, after the feedback (chat models)
REVISE_INSTRUCTION = (
    "Fix the function. Return the whole corrected function, with its imports, in one ```python code block."
)
_ASSISTANT_MARK = "\u2063rlstream-assistant\u2063"
_FEEDBACK_MARK = "\u2063rlstream-feedback\u2063"


@dataclass(frozen=True)
class Segment:
    """What comes between one turn's generated tokens and the next turn's: the end of the model's turn
    (``before``), the feedback as the user's next message (``content``: derived from untrusted output,
    so it is encoded with special tokens split) and the opening of the model's next turn (``after``)."""

    before: str
    content: str
    after: str


def feedback_segment(
    tokenizer: Any, task_prompt: str, feedback_text: str, template: PromptTemplate | None = None
) -> Segment:
    """The segment that tells the model the feedback on its last turn and opens its next one.

    Chat models: the feedback is the user's next message in the tokenizer's own chat template (the
    template rendered around marks, and the text between the assistant's mark and the next message
    taken). Completion models: the feedback as Python comments, then the task's prompt again, which the
    model completes like the first time.
    """
    template = template or template_for(tokenizer)
    if template.style == "completion":
        comments = "".join(f"# {line}\n" if line else "#\n" for line in feedback_text.splitlines())
        return Segment(before="\n", content=comments, after=task_prompt)
    messages = []
    if template.system:
        messages.append({"role": "system", "content": template.system})
    messages += [
        {"role": "user", "content": template.user_template.format(prompt=task_prompt.strip("\n"))},
        {"role": "assistant", "content": _ASSISTANT_MARK},
        {"role": "user", "content": _FEEDBACK_MARK},
    ]
    rendered = str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    after_assistant = rendered.split(_ASSISTANT_MARK, 1)[1]
    before, after = after_assistant.split(_FEEDBACK_MARK, 1)
    return Segment(before=before, content=f"{feedback_text.rstrip()}\n\n{REVISE_INSTRUCTION}", after=after)


# --- where the program ends -------------------------------------------------------------------------

_DEFINES = ("def ", "async def ", "class ", "@")
_HEADER = ("import ", "from ", "#")


def code_end(text: str) -> int | None:
    """Where the program written in ``text`` ends - the index the completion is cut at - or None while
    it may still go on. Only whole lines are judged (what follows the last newline is still being
    written).

    A program has ended at the fence that closes the block it was written in, or before a top-level
    line that is not part of it (a call, an ``assert``, ``print``, ``if __name__ == ...``, prose)
    once a function body has been written: what :func:`extract_code` would drop anyway. Before any
    body (prose introducing the answer, imports, a constant) nothing ends. In the completion style the
    text starts inside the prompt's function, so its indented lines are that body.
    """
    pos = 0
    in_fence = body = False
    for line in text.split("\n")[:-1]:
        start, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if stripped.startswith("```"):
            if in_fence and body:
                return pos
            in_fence, body = not in_fence, False
            continue
        if not stripped:
            continue
        if line[:1] in (" ", "\t"):
            body = True
        elif line.startswith(_DEFINES + _HEADER):
            continue
        elif body:
            return start
    return None


# --- extraction -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    code: str
    #: ``fenced`` (a ```python block), ``function`` (an unfenced top-level def), ``body`` (the
    #: completion continues the prompt's signature), or ``none``; ``+header`` when the prompt's imports
    #: and helpers were prepended, ``+trimmed`` when trailing lines were dropped to make it parse
    method: str

    @property
    def parses(self) -> bool:
        return _parses(self.code)


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"", "python", "py", "python3"}
_TOP_LEVEL_KEEP = ("def ", "async def ", "class ", "@", "import ", "from ", "#")


def extract_code(completion: str, prompt: str, entry_point: str | None = None) -> Extraction:
    """The program to execute for ``completion`` of the task ``prompt``.

    Order: a fenced block (the one defining ``entry_point``, else the first Python one); else an
    unfenced top-level ``def entry_point``; else the completion as the body of the prompt's function.
    A fenced or unfenced function gets the prompt's header (imports, helper functions) prepended when it
    uses names only the header defines.
    """
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(completion)]
    python_blocks = [body for tag, body in blocks if tag in _PYTHON_TAGS]
    if python_blocks:
        chosen = _pick_block(python_blocks, entry_point)
        if entry_point is not None and not _defines(chosen, entry_point) and _is_indented_body(chosen):
            return _finish(prompt + chosen, "fenced+body", entry_point)
        return _with_header(chosen.rstrip() + "\n", "fenced", prompt, entry_point)
    if entry_point is not None:
        match = re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", completion, re.MULTILINE)
        if match:
            start = _start_of_header(completion, match.start())
            code = _cut_trailing_script(completion[start:])
            return _with_header(code, "function", prompt, entry_point)
    if not completion.strip():
        return Extraction(code=prompt, method="none")
    return _finish(prompt + _cut_trailing_script(completion), "body", entry_point)


def _pick_block(blocks: list[str], entry_point: str | None) -> str:
    if entry_point is not None:
        for body in blocks:
            if _defines(body, entry_point):
                return body
    for body in blocks:
        if _parses(body):
            return body
    return blocks[0]


def _defines(code: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", code, re.MULTILINE) is not None


def _is_indented_body(code: str) -> bool:
    lines = [line for line in code.splitlines() if line.strip()]
    return bool(lines) and lines[0][:1] in (" ", "\t")


def _start_of_header(text: str, def_at: int) -> int:
    """Walk up from the def over code (imports, helpers, decorators, indented lines) until prose."""
    lines = text[:def_at].splitlines(keepends=True)
    start = def_at
    for line in reversed(lines):
        if not line.strip() or line[:1].isspace() or line.startswith(_TOP_LEVEL_KEEP):
            start -= len(line)
            continue
        break
    return start


def _cut_trailing_script(code: str) -> str:
    """Drop what follows the function(s): test calls, ``if __name__`` blocks, prose, closing fences."""
    kept: list[str] = []
    for line in code.splitlines(keepends=True):
        is_script = line.strip() and not line[:1].isspace() and not line.startswith(_TOP_LEVEL_KEEP)
        if is_script and any(k.strip() for k in kept):
            break
        kept.append(line)
    return "".join(kept).rstrip() + "\n"


def _with_header(code: str, method: str, prompt: str, entry_point: str | None) -> Extraction:
    header = _prompt_header(prompt, entry_point)
    if header and _needs_header(code, header):
        return _finish(header + code, method + "+header", entry_point)
    return _finish(code, method, entry_point)


def _prompt_header(prompt: str, entry_point: str | None) -> str:
    """The part of the prompt above the entry point's def (imports and helper functions)."""
    if entry_point is None:
        return ""
    match = re.search(rf"^def\s+{re.escape(entry_point)}\s*\(", prompt, re.MULTILINE)
    if not match:
        return ""
    header = prompt[: match.start()]
    return header if header.strip() and _parses(header) else ""


def _needs_header(code: str, header: str) -> bool:
    try:
        header_names = _top_level_names(pyast.parse(header))
        code_names = _top_level_names(pyast.parse(code))
    except SyntaxError:
        return True
    return not header_names <= code_names


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _finish(code: str, method: str, entry_point: str | None) -> Extraction:
    if _parses(code):
        return Extraction(code=code, method=method)
    # A completion cut by max_tokens ends mid-statement: keep the longest prefix that parses and still
    # defines the entry point.
    lines = code.splitlines(keepends=True)
    for end in range(len(lines) - 1, 0, -1):
        candidate = "".join(lines[:end])
        defined = entry_point is None or _defines(candidate, entry_point)
        if _parses(candidate) and defined and _has_body(candidate, entry_point):
            return Extraction(code=candidate.rstrip() + "\n", method=method + "+trimmed")
    return Extraction(code=code, method=method)


def _has_body(code: str, entry_point: str | None) -> bool:
    """The entry point does more than hold its docstring (a trimmed stub is not a program)."""
    tree = pyast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            entry_point is None or node.name == entry_point
        ):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            return bool(body)
    return entry_point is None


def _parses(code: str) -> bool:
    try:
        pyast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True
