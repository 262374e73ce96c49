#!/usr/bin/env python3
"""Validate the text-tool-call corpus in this directory (stdlib only, Python 3.11+).

Checks, for every *.toml file here:
  * the file parses; top-level keys family/models/sources/notes are present and typed;
  * every entry in [[positive]], [[alias]] and [[negative]] has a unique id (across all files),
    a `what` and a `text`;
  * positives and aliases carry `expect`: a JSON list of {"name", "arguments"} objects naming only
    the declared tools, with arguments of the declared JSON-schema types, the required ones present,
    no undeclared argument, enum values respected;
  * aliases carry `written_name`, the name as the model wrote it: not a declared name, but the same
    as the expected name once case and separators are ignored, or another agent's name for the same
    action listed in OTHER_AGENT_NAMES;
  * negatives carry no `expect`;
  * a light consistency check: each expected call name (or alias `written_name`) occurs in the
    text, and every short plain string argument occurs in the text verbatim.

Prints a per-family count table; exits 1 (with file and id in each message) on any error.
Usage: python3 testdata/tool_calls/validate.py [DIR]
"""

import json
import re
import sys
import tomllib
from pathlib import Path

# The tools the harness declares, as JSON-schema fragments. Keep in step with the README.
TOOLS = {
    "read_file": {
        "properties": {"path": "string", "start_line": "integer", "end_line": "integer"},
        "required": ["path"],
    },
    "write_file": {
        "properties": {"path": "string", "content": "string", "replace": "boolean"},
        "required": ["path", "content"],
    },
    "edit_file": {
        "properties": {"path": "string", "old": "string", "new": "string"},
        "required": ["path", "old", "new"],
    },
    "append_file": {
        "properties": {"path": "string", "content": "string"},
        "required": ["path", "content"],
    },
    "list_dir": {"properties": {"path": "string"}, "required": []},
    "run_shell": {
        "properties": {"command": "string", "timeout": "integer"},
        "required": ["command"],
    },
    "todo": {
        "properties": {"action": "string", "items": "array:string", "index": "integer"},
        "required": ["action"],
        "enum": {"action": ["create", "done", "done_all", "list"]},
    },
    "finish": {"properties": {"summary": "string"}, "required": ["summary"]},
    "search_files": {
        "properties": {"pattern": "string", "path": "string"},
        "required": ["pattern"],
    },
    "rollback": {"properties": {"path": "string"}, "required": ["path"]},
    "delete_file": {"properties": {"path": "string"}, "required": ["path"]},
}

TOP_KEYS = {"family": str, "models": list, "sources": list, "notes": str}
SECTIONS = ("positive", "alias", "negative")

# Other agents' names for the same action with the same arguments: a model trained on their
# prompts writes them. Aliases too (README, "Aliases"): mapping them is the harness's policy.
OTHER_AGENT_NAMES = {
    "write_to_file": "write_file",  # Cline (path, content)
    "execute_command": "run_shell",  # Cline (command)
    "create_file": "write_file",  # file-creation tools of several agent tool sets (path, content)
    # round 7: the tool sets small models are trained on (each file of r7_*.toml cites them)
    "run_shell_command": "run_shell",  # gemini-cli, qwen-code
    "Bash": "run_shell",  # Claude Code
    "bash": "run_shell",  # qwen-code traces, SWE-agent
    "execute_bash": "run_shell",  # OpenHands CodeAct
    "developer__shell": "run_shell",  # goose developer extension
    "shell": "run_shell",  # goose (a command string; Codex's argv form is a negative)
    "shell_command": "run_shell",  # Codex CLI string form
    "Read": "read_file",  # Claude Code
    "Write": "write_file",  # Claude Code
    "Edit": "edit_file",  # Claude Code
    "replace": "edit_file",  # gemini-cli
    "edit": "edit_file",  # qwen-code
    "LS": "list_dir",  # Claude Code
    "list_directory": "list_dir",  # gemini-cli, qwen-code
    "list_files": "list_dir",  # Cline
    "Grep": "search_files",  # Claude Code
    "grep_search": "search_files",  # qwen-code
    "search_file_content": "search_files",  # gemini-cli
    "search_dir": "search_files",  # SWE-agent
    "attempt_completion": "finish",  # Cline
    "final_answer": "finish",  # smolagents
}
PLAIN = re.compile(r"[A-Za-z0-9 ./_,:=-]{1,40}")


def normalize(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def type_ok(value, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array:string":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    raise ValueError(kind)


def check_calls(expect_raw, where: str, errors: list) -> list:
    try:
        calls = json.loads(expect_raw)
    except json.JSONDecodeError as e:
        errors.append(f"{where}: expect is not valid JSON: {e}")
        return []
    if not isinstance(calls, list) or not calls:
        errors.append(f"{where}: expect must be a non-empty JSON list of calls")
        return []
    for i, call in enumerate(calls):
        at = f"{where}: call {i}"
        if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
            errors.append(f"{at}: must be an object with exactly 'name' and 'arguments'")
            continue
        name, args = call["name"], call["arguments"]
        tool = TOOLS.get(name)
        if tool is None:
            errors.append(f"{at}: '{name}' is not a declared tool")
            continue
        if not isinstance(args, dict):
            errors.append(f"{at}: arguments must be an object")
            continue
        for key, value in args.items():
            kind = tool["properties"].get(key)
            if kind is None:
                errors.append(f"{at}: '{name}' has no argument '{key}'")
            elif not type_ok(value, kind):
                errors.append(f"{at}: '{name}.{key}' must be {kind}, got {json.dumps(value)}")
            elif key in tool.get("enum", {}) and value not in tool["enum"][key]:
                errors.append(f"{at}: '{name}.{key}' = {value!r} is not one of {tool['enum'][key]}")
        for key in tool["required"]:
            if key not in args:
                errors.append(f"{at}: '{name}' is missing required argument '{key}'")
    return calls if isinstance(calls, list) else []


def check_consistency(text: str, calls: list, written_name, where: str, errors: list):
    low = text.lower()
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        shown = written_name if written_name else call["name"]
        if shown.lower() not in low:
            errors.append(f"{where}: call {i}: name '{shown}' does not occur in the text")
        args = call.get("arguments")
        if isinstance(args, dict):
            for key, value in args.items():
                if isinstance(value, str) and PLAIN.fullmatch(value) and value not in text:
                    errors.append(f"{where}: call {i}: value {value!r} of '{key}' not in the text")


def validate(directory: Path):
    errors: list[str] = []
    seen_ids: dict[str, str] = {}
    rows = []
    files = sorted(directory.glob("*.toml"))
    if not files:
        errors.append(f"{directory}: no *.toml files")
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            errors.append(f"{path.name}: does not parse: {e}")
            continue
        is_shared = path.name == "negatives.toml"
        for key, kind in TOP_KEYS.items():
            if not isinstance(data.get(key), kind):
                errors.append(f"{path.name}: top-level '{key}' missing or not a {kind.__name__}")
        if not is_shared and not data.get("sources"):
            errors.append(f"{path.name}: 'sources' must not be empty")
        unknown = set(data) - set(TOP_KEYS) - set(SECTIONS)
        if unknown:
            errors.append(f"{path.name}: unknown top-level keys {sorted(unknown)}")
        counts = {s: 0 for s in SECTIONS}
        for section in SECTIONS:
            entries = data.get(section, [])
            if not isinstance(entries, list):
                errors.append(f"{path.name}: [[{section}]] must be an array of tables")
                continue
            for n, entry in enumerate(entries):
                eid = entry.get("id")
                where = f"{path.name}: [[{section}]] #{n + 1} id={eid!r}"
                if not isinstance(eid, str) or not eid:
                    errors.append(f"{where}: missing id")
                    continue
                if eid in seen_ids:
                    errors.append(f"{where}: duplicate id (also in {seen_ids[eid]})")
                seen_ids[eid] = path.name
                if not isinstance(entry.get("what"), str) or not entry["what"].strip():
                    errors.append(f"{where}: missing 'what'")
                text = entry.get("text")
                if not isinstance(text, str):
                    errors.append(f"{where}: missing 'text'")
                    continue
                allowed = {"id", "what", "text"}
                if section == "negative":
                    if "expect" in entry:
                        errors.append(f"{where}: a negative must not have 'expect'")
                else:
                    allowed |= {"expect"}
                    if not text.strip():
                        errors.append(f"{where}: empty text")
                    if not isinstance(entry.get("expect"), str):
                        errors.append(f"{where}: missing 'expect' (a JSON string)")
                        continue
                    calls = check_calls(entry["expect"], where, errors)
                    written = None
                    if section == "alias":
                        allowed |= {"written_name"}
                        written = entry.get("written_name")
                        if not isinstance(written, str) or not written:
                            errors.append(f"{where}: an alias needs 'written_name'")
                            written = None
                        elif written in TOOLS:
                            errors.append(f"{where}: written_name '{written}' is a declared name")
                        elif not any(
                            isinstance(c, dict)
                            and isinstance(c.get("name"), str)
                            and (
                                normalize(c["name"]) == normalize(written)
                                or OTHER_AGENT_NAMES.get(written) == c["name"]
                            )
                            for c in calls
                        ):
                            errors.append(
                                f"{where}: written_name '{written}' maps to no expected call "
                                "by case/separator folding"
                            )
                    check_consistency(text, calls, written, where, errors)
                extra = set(entry) - allowed
                if extra:
                    errors.append(f"{where}: unknown keys {sorted(extra)}")
                counts[section] += 1
        rows.append((data.get("family", path.stem), path.name, counts))
    return rows, errors


def main() -> int:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    rows, errors = validate(directory)
    width = max([len(r[0]) for r in rows] + [6])
    print(f"{'family':<{width}}  {'file':<26} {'pos':>4} {'alias':>5} {'neg':>4}")
    totals = {s: 0 for s in SECTIONS}
    families_with_calls = 0
    for family, name, counts in rows:
        print(
            f"{family:<{width}}  {name:<26} {counts['positive']:>4} {counts['alias']:>5} "
            f"{counts['negative']:>4}"
        )
        for s in SECTIONS:
            totals[s] += counts[s]
        if counts["positive"]:
            families_with_calls += 1
    print(
        f"{'total':<{width}}  {str(len(rows)) + ' files':<26} {totals['positive']:>4} "
        f"{totals['alias']:>5} {totals['negative']:>4}"
    )
    print(
        f"families with positives: {families_with_calls}; "
        f"positives + aliases: {totals['positive'] + totals['alias']}; "
        f"negatives: {totals['negative']}"
    )
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
