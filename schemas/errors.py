"""The one exception tree of rlstream.

Every error a user can see derives from :class:`RlstreamError` and carries a plain cause and, where there
is one, the fix. Third-party exceptions are translated into this tree at the adapter that called them, so
callers never need to know which client library sits underneath.
"""

from __future__ import annotations


class RlstreamError(Exception):
    """Root of every error rlstream raises on purpose."""

    #: process exit code when this error reaches the CLI (0 ok, 1 the work found a problem, 2 bad input)
    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  fix: {self.hint}"


class UsageError(RlstreamError):
    """The command line, a settings value or a file given by the user is wrong."""

    exit_code = 2


class InputError(UsageError):
    """A piece of input data is invalid; ``location`` names the field or line at fault."""

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None) -> None:
        super().__init__(f"{location}: {message}" if location else message, hint=hint)
        self.location = location


class EventDecodeError(InputError):
    """A Kafka record is not a valid rlstream event (bad headers, body or schema version)."""


class InfraError(RlstreamError):
    """Something outside the program's control failed: a broker, a download, a missing tool."""


class BrokerError(InfraError):
    """The Kafka broker could not be started, reached or used."""


class DependencyError(InfraError):
    """A required tool or artifact (Java, Maven, a package, a model) is missing or corrupt."""


class SandboxError(InfraError):
    """The sandbox itself failed (not the program it ran): it is retried, never scored."""
