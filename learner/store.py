"""Where published weights live, addressed by URI. ``file://`` is built in; an object store plugs in by
registering its scheme (``register_scheme("s3", factory)``) with a factory that builds a
:class:`WeightStore` from a base URI.

Stores never expose half-written objects: ``put`` makes the object visible only once it is complete.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

from schemas.errors import DependencyError, UsageError

_CHUNK = 4 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    with path.open("rb") as fh:
        os.fsync(fh.fileno())


def fsync_tree(root: Path) -> None:
    """fsync every file and directory under ``root`` (itself included), deepest first."""
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            fsync_file(Path(dirpath) / name)
        fsync_dir(Path(dirpath))


class WeightStore(Protocol):
    """Puts local files under a key and hands back local paths for URIs it issued."""

    def put(self, local: Path, key: str) -> str:
        """Store ``local`` under ``key`` (e.g. ``run/v3/model.safetensors``); return its URI."""
        ...

    def get(self, uri: str, cache_dir: Path) -> Path:
        """A local path holding the object ``uri`` names (downloaded into ``cache_dir`` if remote)."""
        ...


class FileStore:
    """A directory. ``put`` hard-links when it can (same filesystem: instant even for gigabytes, and
    independent of the checkpoint later being pruned) and copies otherwise, then renames into place."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, local: Path, key: str) -> str:
        dest = (self.root / key).resolve()
        if self.root.resolve() not in dest.parents:
            raise UsageError(f"store key {key!r} leaves the store", hint="use a relative key without '..'")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists() and os.path.samefile(local, dest):
            return dest.as_uri()  # put again after a restart: already there
        tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.tmp")
        try:
            os.link(local, tmp)
        except OSError:
            shutil.copyfile(local, tmp)
            fsync_file(tmp)
        try:
            os.replace(tmp, dest)
        finally:
            # a rename between two links of one file succeeds without removing the source
            tmp.unlink(missing_ok=True)
        fsync_dir(dest.parent)
        return dest.as_uri()

    def get(self, uri: str, cache_dir: Path) -> Path:
        path = path_of_file_uri(uri)
        if not path.is_file():
            raise DependencyError(f"{uri}: no such file", hint="check the store directory and the URI")
        return path


def path_of_file_uri(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        raise UsageError(f"{uri!r} is not a local file:// URI", hint="write it as file:///absolute/path")
    return Path(unquote(parsed.path))


StoreFactory = Callable[[str], WeightStore]

_SCHEMES: dict[str, StoreFactory] = {"file": lambda base: FileStore(path_of_file_uri(base))}


def register_scheme(scheme: str, factory: StoreFactory) -> None:
    """Make ``scheme://`` URIs usable for publication (the factory gets the base URI)."""
    _SCHEMES[scheme.lower()] = factory


def store_for(base_uri: str) -> WeightStore:
    """The store for a base URI such as ``file:///var/rlstream/policies``."""
    scheme = urlparse(base_uri).scheme.lower()
    factory = _SCHEMES.get(scheme)
    if factory is None:
        known = ", ".join(sorted(f"{s}://" for s in _SCHEMES))
        raise UsageError(
            f"no weight store for {base_uri!r} (scheme {scheme or 'missing'!r})",
            hint=f"use one of {known}, or register_scheme() the store's scheme first",
        )
    return factory(base_uri)


def fetch_verified(uri: str, sha256: str, cache_dir: Path) -> Path:
    """A local copy of the object at ``uri`` whose sha256 has been checked against ``sha256``."""
    scheme = urlparse(uri).scheme.lower()
    if scheme not in _SCHEMES:
        raise UsageError(f"no weight store for {uri!r}", hint="register_scheme() the store's scheme first")
    path = _SCHEMES[scheme](uri).get(uri, cache_dir)
    actual = file_sha256(path)
    if actual != sha256:
        raise DependencyError(
            f"{uri}: sha256 {actual} does not match the published {sha256}",
            hint="the object was modified or truncated after publication; republish it",
        )
    return path
