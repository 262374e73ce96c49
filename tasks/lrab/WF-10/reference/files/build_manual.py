"""Build user_manual.md from manual_template.md by running every example for real.

In the template, a fenced block whose info string is `session` holds shell
lines of the form

    $ [VAR=value ...] python timetrack.py ARGS...

Each line is executed (in order, all blocks sharing one scratch data file) and
replaced by the line followed by the program's real stdout+stderr; a non-zero
exit status is shown as `[exit status N]`.  A line `@file` is replaced by the
current content of the scratch data file.  The output block is a plain fenced
block, so the manual shows exactly what the program printed.

The scratch data file is manual_session/entries.json (deleted at start), so
the user's real ~/.timetrack is never touched and every rebuild is identical.

Usage: python build_manual.py [TEMPLATE] [OUTPUT]
"""

import os
import shlex
import subprocess
import sys

SCRATCH_DIR = "manual_session"


def run_line(line, db_path):
    """Run one `$ ...` line; return the text to show under it."""
    words = shlex.split(line[1:].strip())
    env = dict(os.environ)
    env.pop("TIMETRACK_NOW", None)
    env["TIMETRACK_DB"] = db_path
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    if words[:2] != ["python", "timetrack.py"]:
        raise SystemExit(f"refusing to run unexpected command: {line!r}")
    proc = subprocess.run([sys.executable, "timetrack.py"] + words[2:], env=env,
                          capture_output=True, text=True, timeout=30)
    out = (proc.stdout + proc.stderr).rstrip("\n")
    if proc.returncode != 0:
        out += f"\n[exit status {proc.returncode}]"
    return out


def build(template_text, db_path):
    out = []
    in_session = False
    for line in template_text.split("\n"):
        if line.strip() == "```session":
            in_session = True
            out.append("```")
            continue
        if in_session and line.strip() == "```":
            in_session = False
            out.append(line)
            continue
        if in_session and line.startswith("$ "):
            out.append(line)
            result = run_line(line, db_path)
            if result:
                out.append(result)
            continue
        if in_session and line.strip() == "@file":
            with open(db_path, encoding="utf-8") as handle:
                out.append(handle.read().rstrip("\n"))
            continue
        out.append(line)
    if in_session:
        raise SystemExit("unterminated ```session block in template")
    return "\n".join(out)


def main(argv):
    template = argv[1] if len(argv) > 1 else "manual_template.md"
    output = argv[2] if len(argv) > 2 else "user_manual.md"
    os.makedirs(SCRATCH_DIR, exist_ok=True)
    db_path = os.path.join(SCRATCH_DIR, "entries.json")
    if os.path.exists(db_path):
        os.remove(db_path)
    with open(template, encoding="utf-8") as handle:
        text = build(handle.read(), db_path)
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {output} ({len(text.split())} words)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
