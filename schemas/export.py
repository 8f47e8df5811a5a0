"""Export the event contract as JSON Schema files in ``schemas/json/`` (one per event version).

Upstream systems in any language validate against these files. ``python -m schemas.export`` rewrites
them; a test fails when the committed files differ from what the models say.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from schemas import envelope as env
from schemas.registry import EVENT_CLASSES

JSON_DIR = Path(__file__).parent / "json"


def event_schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for cls in EVENT_CLASSES:
        schema = cls.model_json_schema(mode="validation")
        schema["$id"] = f"https://rlstream.dev/schemas/{cls.ce_type()}.json"
        schema["title"] = cls.ce_type()
        schema["x-kafka-key"] = cls.key_field
        out[f"{cls.ce_type()}.json"] = schema
    out["envelope.headers.json"] = {
        "$id": "https://rlstream.dev/schemas/envelope.headers.json",
        "title": "Kafka headers of every rlstream record (CloudEvents 1.0, binary content mode)",
        "type": "object",
        "required": list(env.REQUIRED_HEADERS),
        "properties": {
            env.H_SPECVERSION: {"const": env.SPECVERSION},
            env.H_ID: {"type": "string", "description": "event id (deterministic UUIDv5)"},
            env.H_SOURCE: {"type": "string", "description": "producing component"},
            env.H_TYPE: {"type": "string", "description": "e.g. rlstream.task.published.v2"},
            env.H_TIME: {"type": "string", "format": "date-time"},
            env.H_SUBJECT: {"type": "string", "description": "aggregate id (the Kafka key)"},
            env.H_CONTENT_TYPE: {"const": env.CONTENT_TYPE},
            env.H_TRACEPARENT: {"type": "string", "description": "W3C trace context"},
            env.H_TRACESTATE: {"type": "string"},
            env.H_RUN_ID: {"type": "string"},
            env.H_CAUSATION_ID: {"type": "string", "description": "id of the event that caused this one"},
        },
    }
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(directory: Path = JSON_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in event_schemas().items():
        path = directory / name
        path.write_text(render(schema))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write():
        sys.stdout.write(f"wrote {p}\n")
