"""session/output_schema.py: checking schemas and answers, wrapping a schema whose top
level is not an object, and the answer tool (issue 32, part 2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from wyckoff_cli.core.errors import UsageError
from wyckoff_cli.session.output_schema import (
    ANSWER_TOOL,
    answer_tool,
    check_schema,
    load_schema,
    parse_answer,
    vendor_schema,
)

OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
ARRAY = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ('{"n": 1}', {"n": 1}),
        ('  {"n": 2}\n', {"n": 2}),
        ('```json\n{"n": 3}\n```', {"n": 3}),
        ('```\n{"n": 4}\n```', {"n": 4}),
    ],
)
def test_valid_answers_parse(text: str, data: object) -> None:
    assert parse_answer(text, OBJECT) == (data, None)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("n is 1", "the answer is not JSON"),
        ('{"n": "1"}', "at n: '1' is not of type 'integer'"),
        ("{}", "at (top level): 'n' is a required property"),
        ("[1]", "[1] is not of type 'object'"),
        ('Sure: {"n": 1}', "not JSON"),
    ],
)
def test_invalid_answers_say_what_is_wrong(text: str, says: str) -> None:
    data, problem = parse_answer(text, OBJECT)
    assert data is None and problem is not None and says in problem


def test_a_non_object_schema_is_wrapped_for_the_vendors_and_unwrapped_here() -> None:
    sent = vendor_schema({"$schema": "https://json-schema.org/draft/2020-12/schema", **ARRAY})
    assert sent == {"type": "object", "properties": {"answer": ARRAY}, "required": ["answer"]}
    assert parse_answer('{"answer": ["a", "b"]}', ARRAY) == (["a", "b"], None)
    assert parse_answer('["a"]', ARRAY) == (["a"], None)  # answered bare: also fine
    assert vendor_schema(OBJECT) == OBJECT


def test_the_answer_tool_completes_the_run_with_its_arguments() -> None:
    tool = answer_tool(OBJECT)
    assert tool.name == ANSWER_TOOL and tool.completes_run and tool.answer and not tool.requires_approval
    assert tool.spec().answer and tool.spec().parameters == OBJECT
    assert json.loads(asyncio.run(tool.run({"n": 5}, None))) == {"n": 5}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "objekt"}, "at type"),
        ({"required": "n"}, "at required"),
        ({"properties": {"n": {"type": 3}}}, "at properties/n/type"),
        ({"minimum": "0"}, "at minimum"),
        ("string", "must be a JSON object"),
        (None, "must be a JSON object"),
    ],
)
def test_bad_schemas_are_usage_errors(schema: object, says: str) -> None:
    with pytest.raises(UsageError) as raised:
        check_schema(schema)
    assert says in raised.value.message


def test_load_schema_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{oops")
    with pytest.raises(UsageError, match=r"s\.json is not JSON"):
        load_schema(path)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(UsageError, match="cannot read the output schema"):
        load_schema(path)
    path.write_text(json.dumps(OBJECT))
    assert load_schema(path) == OBJECT


@pytest.mark.parametrize("named", [None, ("read_file", ANSWER_TOOL)])
def test_sub_agents_never_get_the_parents_answer_format(named: tuple[str, ...] | None) -> None:
    from wyckoff_cli.runtime.agent_files import AgentDefinition
    from wyckoff_cli.runtime.subagents import child_registry
    from wyckoff_cli.tools.builtin import default_registry
    from wyckoff_cli.tools.registry import ToolRegistry

    read_file = default_registry().get("read_file")
    assert read_file is not None
    parent = ToolRegistry([answer_tool(OBJECT), read_file])
    child = child_registry(parent, AgentDefinition("helper", "helps", "help", tools=named))
    assert child.names() == ["read_file"]
