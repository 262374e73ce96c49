#!/usr/bin/env python3
"""Check the attack corpus in this folder (stdlib only, Python >= 3.11).

Every `<kind>.toml` must parse, carry `kind` (equal to its file name) and `about`, and hold
attacks whose ids are unique across all files; every step is a known tool call with its required
arguments, a `restart`, or a `wait_ms`; every `{PLACEHOLDER}` is one the runner substitutes.
No tool call may repeat an earlier one verbatim (an anti-loop answers such a repeat from the
earlier result instead of running it). By default the shell of every `run_shell` command is also checked with `sh -n` (and `bash -n`
when the command is a bash script), every `.sh` file the attack writes with `bash -n`, and
every `.py` file it writes with `compile()`, after substituting dummy placeholder values.

    python3 safety/attacks/validate.py            # this folder
    python3 safety/attacks/validate.py DIR --no-shell

Exit code 0 when everything is valid, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

PLACEHOLDERS = ("HOME", "SIBLING", "TMP", "SOCKET", "ABSTRACT", "PORT", "WORKDIR")

# Values used only for syntax checks; the runner substitutes real ones.
DUMMY = {
    "HOME": "/tmp/lrab-validate/home",
    "SIBLING": "/tmp/lrab-validate/sibling",
    "TMP": "/tmp/lrab-validate-tmp",
    "SOCKET": "/tmp/lrab-validate/listen.sock",
    "ABSTRACT": "@lrab-validate-abstract",
    "PORT": "40123",
    "WORKDIR": "/tmp/lrab-validate/work",
}

# tool -> (required args, optional args, {arg: type})
TOOLS: dict[str, tuple[set[str], set[str], dict[str, type | tuple[type, ...]]]] = {
    "read_file": ({"path"}, {"start_line", "end_line"},
                  {"path": str, "start_line": int, "end_line": int}),
    "write_file": ({"path", "content"}, {"replace"},
                   {"path": str, "content": str, "replace": bool}),
    "edit_file": ({"path", "old", "new"}, set(), {"path": str, "old": str, "new": str}),
    "append_file": ({"path", "content"}, set(), {"path": str, "content": str}),
    "list_dir": (set(), {"path"}, {"path": str}),
    "run_shell": ({"command"}, {"timeout"}, {"command": str, "timeout": int}),
    "search_files": ({"pattern"}, {"path"}, {"pattern": str, "path": str}),
    "delete_file": ({"path"}, set(), {"path": str}),
    "rollback": ({"path"}, set(), {"path": str}),
    "todo": ({"action"}, {"items", "index"}, {"action": str, "items": list, "index": int}),
    "finish": ({"summary"}, set(), {"summary": str}),
}
TODO_ACTIONS = {"create", "done", "done_all", "list"}
ID_RE = re.compile(r"^[A-Z]+-[0-9]{2,3}$")
KIND_RE = re.compile(r"^[a-z][a-z0-9-]*$")
PLACEHOLDER_RE = re.compile(r"(\$?)\{([A-Z][A-Z0-9_]*)\}")
ATTACK_KEYS = {"id", "what", "setup", "steps", "goal", "malformed_args", "needs"}
# Things an attack may declare it needs from the runner beyond the seven placeholders.
NEEDS = {"socket-listener", "abstract-listener", "tcp-listener", "finish-gate-tests",
         "prompt-file-in-workdir", "setup-hardlink", "same-filesystem"}


def load_corpus(folder: Path) -> tuple[dict[str, dict], list[str]]:
    """Parse every `*.toml` in `folder`; return {kind: document} and problems found."""
    docs: dict[str, dict] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            problems.append(f"{path.name}: does not parse: {err}")
            continue
        docs[path.stem] = doc
    if not docs:
        problems.append(f"{folder}: no *.toml attack files")
    return docs, problems


def placeholders_in(value, where: str, problems: list[str]) -> None:
    """Every {NAME} must be known; ${NAME} of a placeholder would be substituted inside a
    shell parameter expansion, which is never what the author meant."""
    if isinstance(value, str):
        for m in PLACEHOLDER_RE.finditer(value):
            dollar, name = m.group(1), m.group(2)
            if dollar and name not in PLACEHOLDERS:
                continue  # ${IFS}, ${PATH}: shell syntax, not a placeholder
            if name not in PLACEHOLDERS:
                problems.append(f"{where}: unknown placeholder {{{name}}}")
            elif dollar:
                problems.append(f"{where}: ${{{name}}} would be substituted; write ${name}")
    elif isinstance(value, dict):
        for k, v in value.items():
            placeholders_in(k, where, problems)
            placeholders_in(v, where, problems)
    elif isinstance(value, list):
        for v in value:
            placeholders_in(v, where, problems)


def substitute(value, mapping: dict[str, str]):
    """Replace {NAME} placeholders recursively (strings, lists, tables)."""
    if isinstance(value, str):
        for name, real in mapping.items():
            value = value.replace("{" + name + "}", real)
        return value
    if isinstance(value, dict):
        return {substitute(k, mapping): substitute(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    return value


def check_relative(path: str, where: str, problems: list[str]) -> None:
    p = Path(path)
    if p.is_absolute() or ".." in p.parts or not path:
        problems.append(f"{where}: setup path must be relative and inside the workdir: {path!r}")


def check_setup(entries, where: str, problems: list[str], needs: set[str]) -> None:
    if not isinstance(entries, list):
        problems.append(f"{where}: setup must be an array")
        return
    for i, e in enumerate(entries):
        w = f"{where} setup[{i}]"
        if not isinstance(e, dict):
            problems.append(f"{w}: not a table")
            continue
        kinds = [k for k in ("file", "symlink", "hardlink") if k in e]
        if len(kinds) != 1:
            problems.append(f"{w}: needs exactly one of file/symlink/hardlink")
            continue
        k = kinds[0]
        if not isinstance(e[k], str):
            problems.append(f"{w}: {k} must be a string")
            continue
        check_relative(e[k], w, problems)
        allowed = {"file": {"file", "content"}, "symlink": {"symlink", "target"},
                   "hardlink": {"hardlink", "target"}}[k]
        extra = set(e) - allowed
        if extra:
            problems.append(f"{w}: unknown keys {sorted(extra)}")
        if k == "file" and not isinstance(e.get("content"), str):
            problems.append(f"{w}: file needs a string content")
        if k in ("symlink", "hardlink") and not isinstance(e.get("target"), str):
            problems.append(f"{w}: {k} needs a string target")
        if k == "hardlink" and "setup-hardlink" not in needs:
            problems.append(f"{w}: a hardlink setup must declare needs = [\"setup-hardlink\"]")


def check_step(step, where: str, problems: list[str], lenient: bool) -> None:
    if not isinstance(step, dict):
        problems.append(f"{where}: not a table")
        return
    if "restart" in step:
        if step != {"restart": True}:
            problems.append(f"{where}: a restart step is exactly {{ restart = true }}")
        return
    if "wait_ms" in step:
        v = step["wait_ms"]
        if set(step) != {"wait_ms"} or not isinstance(v, int) or isinstance(v, bool) \
                or not 0 < v <= 60_000:
            problems.append(f"{where}: wait_ms must be alone and 1..60000")
        return
    tool = step.get("tool")
    if set(step) - {"tool", "args"}:
        problems.append(f"{where}: unknown keys {sorted(set(step) - {'tool', 'args'})}")
    if tool not in TOOLS:
        problems.append(f"{where}: unknown tool {tool!r}")
        return
    args = step.get("args", {})
    if not isinstance(args, dict):
        problems.append(f"{where}: args must be a table")
        return
    required, optional, types = TOOLS[tool]
    missing = required - set(args)
    if missing:
        problems.append(f"{where}: {tool} lacks {sorted(missing)}")
    if lenient:
        return
    extra = set(args) - required - optional
    if extra:
        problems.append(f"{where}: {tool} has unknown args {sorted(extra)}")
    for name, value in args.items():
        want = types.get(name)
        if want is None:
            continue
        if want is int and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{where}: {tool}.{name} must be an integer")
        elif want is not int and not isinstance(value, want):
            problems.append(f"{where}: {tool}.{name} must be {want.__name__}")
    if tool == "todo" and args.get("action") not in TODO_ACTIONS:
        problems.append(f"{where}: todo action must be one of {sorted(TODO_ACTIONS)}")
    if tool == "todo" and "items" in args and not all(isinstance(x, str) for x in args["items"]):
        problems.append(f"{where}: todo items must be strings")


def uses_bash_syntax(command: str) -> bool:
    return command.lstrip().startswith(("bash ", "#!/bin/bash", "#!/usr/bin/env bash"))


def shell_problems(attack: dict, where: str) -> list[str]:
    """Syntax-check commands and written scripts with dummy placeholder values."""
    out: list[str] = []
    sh = shutil.which("sh")
    bash = shutil.which("bash")
    a = substitute(attack, DUMMY)

    def run(argv: list[str], text: str, label: str) -> None:
        r = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            msg = (r.stderr or r.stdout).strip().splitlines()
            out.append(f"{label}: {msg[0] if msg else 'syntax error'}")

    files = [(e["file"], e["content"]) for e in a.get("setup", [])
             if isinstance(e, dict) and "file" in e and isinstance(e.get("content"), str)]
    for i, step in enumerate(a.get("steps", [])):
        if not isinstance(step, dict):
            continue
        args = step.get("args", {})
        if not isinstance(args, dict):
            continue
        label = f"{where} step[{i}]"
        if step.get("tool") == "run_shell" and isinstance(args.get("command"), str):
            if sh:
                run([sh, "-n"], args["command"], f"{label} (sh -n)")
            if bash and uses_bash_syntax(args["command"]):
                run([bash, "-n"], args["command"], f"{label} (bash -n)")
        if step.get("tool") in ("write_file", "append_file") and isinstance(args.get("path"), str) \
                and isinstance(args.get("content"), str) and step.get("tool") == "write_file":
            files.append((args["path"], args["content"]))
    for path, content in files:
        label = f"{where} file {path}"
        if path.endswith(".sh") and bash:
            run([bash, "-n"], content, f"{label} (bash -n)")
        elif path.endswith(".py") and content.strip():
            try:
                compile(content, path, "exec")
            except SyntaxError as err:
                out.append(f"{label}: python syntax error line {err.lineno}: {err.msg}")
    return out


def validate(folder: Path, shell: bool) -> tuple[dict[str, int], list[str]]:
    docs, problems = load_corpus(folder)
    counts: dict[str, int] = {}
    seen: dict[str, str] = {}
    for stem, doc in docs.items():
        f = f"{stem}.toml"
        kind = doc.get("kind")
        if kind != stem or not isinstance(kind, str) or not KIND_RE.match(kind):
            problems.append(f"{f}: kind must equal the file name ({stem!r}), got {kind!r}")
        if not isinstance(doc.get("about"), str) or not doc["about"].strip():
            problems.append(f"{f}: about must be a non-empty string")
        extra = set(doc) - {"kind", "about", "attack"}
        if extra:
            problems.append(f"{f}: unknown top-level keys {sorted(extra)}")
        attacks = doc.get("attack", [])
        if not isinstance(attacks, list) or not attacks:
            problems.append(f"{f}: no [[attack]] entries")
            continue
        counts[stem] = len(attacks)
        for n, atk in enumerate(attacks):
            aid = atk.get("id") if isinstance(atk, dict) else None
            where = f"{f} attack[{n}] {aid or '?'}"
            if not isinstance(atk, dict):
                problems.append(f"{where}: not a table")
                continue
            if not isinstance(aid, str) or not ID_RE.match(aid):
                problems.append(f"{where}: id must look like ABC-01")
            elif aid in seen:
                problems.append(f"{where}: id also used in {seen[aid]}")
            else:
                seen[aid] = f
            for key in ("what", "goal"):
                if not isinstance(atk.get(key), str) or not atk[key].strip():
                    problems.append(f"{where}: {key} must be a non-empty string")
            if isinstance(atk.get("what"), str) and "\n" in atk["what"].strip():
                problems.append(f"{where}: what must be one line")
            extra = set(atk) - ATTACK_KEYS
            if extra:
                problems.append(f"{where}: unknown keys {sorted(extra)}")
            needs = atk.get("needs", [])
            if not isinstance(needs, list) or any(x not in NEEDS for x in needs):
                problems.append(f"{where}: needs must list only {sorted(NEEDS)}")
                needs = []
            lenient = atk.get("malformed_args", False)
            if not isinstance(lenient, bool):
                problems.append(f"{where}: malformed_args must be a boolean")
                lenient = False
            if "setup" in atk:
                check_setup(atk["setup"], where, problems, set(needs))
            steps = atk.get("steps")
            if not isinstance(steps, list) or not steps:
                problems.append(f"{where}: steps must be a non-empty array")
                continue
            if not any(isinstance(s, dict) and "tool" in s for s in steps):
                problems.append(f"{where}: no tool call among the steps")
            seen_calls: dict[str, int] = {}
            for i, step in enumerate(steps):
                check_step(step, f"{where} step[{i}]", problems, lenient)
                if isinstance(step, dict) and "tool" in step:
                    sig = repr(sorted(step.items(), key=lambda kv: kv[0]))
                    if sig in seen_calls:
                        # an identical call is answered from the earlier one, not executed
                        problems.append(f"{where} step[{i}]: identical to step[{seen_calls[sig]}]; "
                                        "vary an argument so that it runs again")
                    seen_calls.setdefault(sig, i)
            placeholders_in(atk, where, problems)
            text = repr(atk)
            for name, need in (("{SOCKET}", "socket-listener"), ("{ABSTRACT}", "abstract-listener"),
                               ("{PORT}", "tcp-listener")):
                if name in text and need not in needs:
                    problems.append(f"{where}: uses {name} but does not declare needs {need!r}")
            if shell:
                problems.extend(shell_problems(atk, where))
    return counts, problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--no-shell", action="store_true", help="skip sh -n / bash -n / compile checks")
    ns = ap.parse_args()
    counts, problems = validate(Path(ns.folder), shell=not ns.no_shell)
    for kind in sorted(counts):
        print(f"{kind:20} {counts[kind]:4}")
    print(f"{'total':20} {sum(counts.values()):4}")
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
