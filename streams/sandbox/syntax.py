"""A program the host's own parser cannot read, read by the WASM guest's newer one.

The host runs Python 3.11; the WASM guest runs CPython 3.15. A correct program in syntax 3.12+ added
(PEP 695's ``type X = ...`` and ``def f[T](...)``, PEP 701's f-strings that reuse their quotes, PEP 750's
template strings) runs in the guest but cannot be parsed on the host, where the static analysis would
then see no program at all. Here the guest parses it with its own parser and writes it back as source the
host's parser reads, with the same meaning for everything the analysis looks at (calls, names,
attributes, literals, definitions): a ``type`` alias becomes an assignment of its value, a type
parameter's bound, constraints and default become expressions evaluated before its definition, a
template string becomes an f-string. Its line numbers are the rewritten source's.

The guest runs this module's own lowering code (trusted) on the program's text (data: never run), in a
sandbox like any other, so a hostile text costs a bounded parse in a guest and nothing on the host.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from schemas.errors import RlstreamError
from streams.sandbox.config import SandboxConfig
from streams.sandbox.limits import Limits

#: the lowering, run in the guest as a program whose entry point gets the source text
LOWERING = r'''
import ast


class _Lower(ast.NodeTransformer):
    def _params_first(self, node):
        """A definition's type parameters' bounds and defaults, evaluated before it (their names
        and calls stay visible); the definition without them."""
        before = []
        for p in getattr(node, "type_params", None) or []:
            for field in ("bound", "default_value"):
                value = getattr(p, field, None)
                if value is not None:
                    before.append(ast.copy_location(ast.Expr(self.visit(value)), node))
        if hasattr(node, "type_params"):
            node.type_params = []
        return before

    def _definition(self, node):
        before = self._params_first(node)
        node = self.generic_visit(node)
        return [*before, node] if before else node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_TypeAlias(self, node):
        before = self._params_first(node)
        value = self.visit(node.value)
        assign = ast.copy_location(ast.Assign(targets=[node.name], value=value, lineno=node.lineno), node)
        return [*before, assign]

    def visit_TemplateStr(self, node):
        parts = []
        for v in node.values:
            if type(v).__name__ == "Interpolation":
                parts.append(
                    ast.FormattedValue(value=self.visit(v.value), conversion=v.conversion,
                                       format_spec=self.visit(v.format_spec) if v.format_spec else None)
                )
            else:
                parts.append(self.visit(v))
        return ast.copy_location(ast.JoinedStr(values=parts), node)


def lower(source):
    tree = _Lower().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))
'''

#: a program's text is read in a guest of this size and time at most
LIMITS = Limits(timeout_s=10.0, memory_mb=256)


class GuestSyntaxError(RlstreamError):
    """The guest could not read the program either, or could not run."""


class GuestSyntax:
    """Lowers programs in the WASM guest; one sandbox per process, made on first use."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self._config = config or SandboxConfig()
        self._sandbox: object | None = None
        self._lock = threading.Lock()

    def lowered(self, source: str) -> str:
        """``source`` as 3.11 source of the same meaning to the analysis; raises
        :class:`GuestSyntaxError` with the guest's reason when it cannot."""
        from streams.sandbox.service import Sandbox  # the runtime, only when a program needs it

        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(self._config)
            sandbox = self._sandbox
        assert isinstance(sandbox, Sandbox)
        try:
            result = sandbox.run_cases(LOWERING, "lower", [repr((source,))], limits=LIMITS, backend="wasm")
        except RlstreamError as exc:
            raise GuestSyntaxError(f"the guest parser cannot run: {exc}") from None
        if result.infra_error or len(result.cases) != 1:
            raise GuestSyntaxError(f"the guest parser did not answer: {result.infra_error or 'no result'}")
        case = result.cases[0]
        if case.status != "ok" or case.result_repr is None:
            raise GuestSyntaxError((case.error or case.status)[:300])
        from schemas import pyast

        text = pyast.literal_eval(case.result_repr)
        if not isinstance(text, str):
            raise GuestSyntaxError("the guest parser answered something other than source text")
        return text


_DEFAULT = GuestSyntax()


@lru_cache(maxsize=256)
def lowered_source(source: str) -> str:
    """:meth:`GuestSyntax.lowered` with this process's default sandbox (cached per text)."""
    return _DEFAULT.lowered(source)
