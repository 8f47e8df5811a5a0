"""The Apache Kafka broker jars, fetched from Maven Central with Maven and cached per version.

Only Maven Central carries Kafka as artifacts, so a throwaway pom naming ``kafka_<scala>`` is resolved
with ``dependency:copy-dependencies``. Kafka itself ships no SLF4J binding; without one the broker logs
nothing, so the binding that matches the resolved slf4j-api is added in a second resolution.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from schemas.errors import DependencyError

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rlstream.local</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>1</version>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
_DEP = (
    "    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
    "<version>{version}</version></dependency>"
)
_COMPLETE = ".complete"
SETUP_HINT = "run scripts/setup.sh (or: .venv/bin/rlstream broker fetch)"


def lib_dir(jar_root: Path, version: str) -> Path:
    return jar_root / version / "lib"


def jars_present(jar_root: Path, version: str) -> bool:
    return (jar_root / version / _COMPLETE).is_file() and any(lib_dir(jar_root, version).glob("kafka_*.jar"))


def require_jars(jar_root: Path, version: str) -> Path:
    """The cached lib directory, or a DependencyError naming the command that fetches it."""
    if not jars_present(jar_root, version):
        raise DependencyError(
            f"Apache Kafka {version} jars are not in {lib_dir(jar_root, version)}",
            hint=SETUP_HINT,
        )
    return lib_dir(jar_root, version)


def fetch_jars(
    jar_root: Path, version: str, *, scala_version: str = "2.13", maven: str = "mvn", log: bool = False
) -> Path:
    """Resolve ``org.apache.kafka:kafka_<scala>:<version>`` and its runtime dependencies into the cache.

    Idempotent: a complete cache is returned as is. The jars land in a temporary folder first and are
    moved into place only when resolution succeeded, so an interrupted fetch never leaves half a lib/.
    """
    if jars_present(jar_root, version):
        return lib_dir(jar_root, version)
    mvn = shutil.which(maven)
    if mvn is None:
        raise DependencyError(
            f"Maven ({maven}) is not installed; it fetches the Apache Kafka jars from Maven Central",
            hint="run scripts/setup.sh (it installs maven and Java 17) or apt-get install -y maven",
        )
    target = jar_root / version
    target.mkdir(parents=True, exist_ok=True)
    kafka = {"group": "org.apache.kafka", "artifact": f"kafka_{scala_version}", "version": version}
    with tempfile.TemporaryDirectory(prefix="fetch-", dir=target) as tmp:
        work = Path(tmp)
        _resolve(mvn, work, [kafka], log=log)
        extra = _logging_binding(work / "lib")
        if extra:
            _resolve(mvn, work, [kafka, *extra], log=log)
        final = lib_dir(jar_root, version)
        if final.exists():
            shutil.rmtree(final)
        (work / "lib").rename(final)
    names = sorted(p.name for p in final.glob("*.jar"))
    (target / _COMPLETE).write_text("\n".join(names) + "\n")
    return final


def _resolve(mvn: str, work: Path, deps: list[dict[str, str]], *, log: bool) -> None:
    (work / "pom.xml").write_text(_POM.format(dependencies="\n".join(_DEP.format(**d) for d in deps)))
    out = work / "lib"
    if out.exists():
        shutil.rmtree(out)
    cmd = [
        mvn,
        "-B",
        "-q",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={out}",
    ]
    proc = subprocess.run(cmd, cwd=work, capture_output=not log, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(((proc.stdout or "") + (proc.stderr or "")).strip().splitlines()[-15:])
        names = ", ".join(f"{d['group']}:{d['artifact']}:{d['version']}" for d in deps)
        raise DependencyError(
            f"Maven could not fetch {names} (exit {proc.returncode})" + (f":\n{tail}" if tail else ""),
            hint="check the network or proxy (~/.m2/settings.xml) and that the Kafka version exists on "
            "Maven Central (RLSTREAM_BROKER__KAFKA_VERSION), then run the command again",
        )


def _logging_binding(lib: Path) -> list[dict[str, str]]:
    """The SLF4J -> log4j2 binding that fits the resolved slf4j-api and log4j-core (none if present)."""
    names = [p.name for p in lib.glob("*.jar")]
    if any(re.match(r"(log4j-slf4j2?-impl|slf4j-reload4j|slf4j-log4j12|slf4j-simple)-", n) for n in names):
        return []
    slf4j = _version_of(names, "slf4j-api")
    log4j = _version_of(names, "log4j-core") or "2.24.3"
    artifact = "log4j-slf4j2-impl" if slf4j and not slf4j.startswith("1.") else "log4j-slf4j-impl"
    deps = [{"group": "org.apache.logging.log4j", "artifact": artifact, "version": log4j}]
    if not _version_of(names, "log4j-core"):
        deps.append({"group": "org.apache.logging.log4j", "artifact": "log4j-core", "version": log4j})
    return deps


def _version_of(names: list[str], artifact: str) -> str | None:
    for name in names:
        m = re.fullmatch(rf"{re.escape(artifact)}-(\d[\w.\-]*)\.jar", name)
        if m:
            return m.group(1)
    return None
