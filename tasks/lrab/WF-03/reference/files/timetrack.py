#!/usr/bin/env python3
"""timetrack - a tiny command-line time tracker.

Usage:
    python timetrack.py start PROJECT [--note TEXT] [--at "YYYY-MM-DD HH:MM"]
    python timetrack.py stop [--note TEXT] [--at "YYYY-MM-DD HH:MM"]
    python timetrack.py status
    python timetrack.py report [--project NAME]
    python timetrack.py export --format csv [--since YYYY-MM-DD] [--output FILE]

Every global option goes before the command name:
    --db PATH    use PATH as the data file instead of the default

Entries are kept in a JSON file. The data file is chosen in this order:
    1. the --db option
    2. the TIMETRACK_DB environment variable
    3. ~/.timetrack/entries.json

The JSON file holds one object: {"version": 1, "entries": [...]}, where each entry is
{"project": str, "start": "YYYY-MM-DDTHH:MM:SS", "end": same format or null, "note": str}.
An entry whose "end" is null is the running timer; at most one may exist.

For reproducible runs the current time can be pinned with the TIMETRACK_NOW environment
variable (format "YYYY-MM-DDTHH:MM:SS" or "YYYY-MM-DD HH:MM").
"""

import argparse
import csv
import io
import json
import os
import sys
from datetime import datetime

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
INPUT_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M")
DATA_VERSION = 1


class TimetrackError(Exception):
    """A user-facing error: printed without a traceback, exit status 1."""


def parse_time(text, what="time"):
    """Parse a user-supplied timestamp in one of INPUT_FORMATS."""
    for fmt in INPUT_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    raise TimetrackError(f"invalid {what} {text!r}: expected YYYY-MM-DD HH:MM")


def now():
    """Current local time, seconds precision; TIMETRACK_NOW pins it for reproducible runs."""
    pinned = os.environ.get("TIMETRACK_NOW")
    if pinned:
        return parse_time(pinned, "TIMETRACK_NOW")
    return datetime.now().replace(microsecond=0)


def default_db_path():
    env = os.environ.get("TIMETRACK_DB")
    if env:
        return env
    return os.path.join(os.path.expanduser("~"), ".timetrack", "entries.json")


def load_entries(path):
    """Read the entry list; a missing file means no entries yet."""
    if not os.path.exists(path):
        return []
    try:
        with open(path, "r", encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise TimetrackError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}")
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise TimetrackError(f"{path}: expected an object with an 'entries' list")
    for i, entry in enumerate(data["entries"]):
        for key in ("project", "start"):
            if key not in entry:
                raise TimetrackError(f"{path}: entry {i} has no '{key}' field")
        entry.setdefault("end", None)
        entry.setdefault("note", "")
    return data["entries"]


def save_entries(path, entries):
    """Write atomically so an interrupted run never leaves a half-written file."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"version": DATA_VERSION, "entries": entries}, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def running_entry(entries):
    for entry in entries:
        if entry.get("end") is None:
            return entry
    return None


def entry_hours(entry):
    """Duration of a finished entry in hours (float)."""
    start = datetime.strptime(entry["start"], TIME_FORMAT)
    end = datetime.strptime(entry["end"], TIME_FORMAT)
    return (end - start).total_seconds() / 3600.0


def cmd_start(args, entries):
    current = running_entry(entries)
    if current is not None:
        raise TimetrackError(
            f"a timer is already running for '{current['project']}' since "
            f"{current['start'][:16].replace('T', ' ')}; stop it first"
        )
    project = args.project.strip()
    if not project:
        raise TimetrackError("project name must not be empty")
    started = parse_time(args.at, "--at") if args.at else now()
    entries.append(
        {"project": project, "start": started.strftime(TIME_FORMAT), "end": None, "note": args.note or ""}
    )
    print(f"Started '{project}' at {started.strftime('%Y-%m-%d %H:%M')}")
    return True


def cmd_stop(args, entries):
    current = running_entry(entries)
    if current is None:
        raise TimetrackError("no timer is running")
    ended = parse_time(args.at, "--at") if args.at else now()
    started = datetime.strptime(current["start"], TIME_FORMAT)
    if ended < started:
        raise TimetrackError("stop time is before the start time")
    current["end"] = ended.strftime(TIME_FORMAT)
    if args.note:
        current["note"] = (current["note"] + "; " if current["note"] else "") + args.note
    print(
        f"Stopped '{current['project']}' at {ended.strftime('%Y-%m-%d %H:%M')} "
        f"({entry_hours(current):.2f} h)"
    )
    return True


def cmd_status(args, entries):
    current = running_entry(entries)
    if current is None:
        print("No timer running.")
    else:
        started = datetime.strptime(current["start"], TIME_FORMAT)
        elapsed = (now() - started).total_seconds() / 3600.0
        print(
            f"Running: '{current['project']}' since {started.strftime('%Y-%m-%d %H:%M')} "
            f"({elapsed:.2f} h so far)"
        )
    return False


def cmd_report(args, entries):
    totals = {}
    counts = {}
    for entry in entries:
        if entry.get("end") is None:
            continue
        if args.project and entry["project"] != args.project:
            continue
        totals[entry["project"]] = totals.get(entry["project"], 0.0) + entry_hours(entry)
        counts[entry["project"]] = counts.get(entry["project"], 0) + 1
    if not totals:
        print("No finished entries.")
    else:
        width = max(len("project"), max(len(p) for p in totals))
        print(f"{'project'.ljust(width)}  entries   hours")
        for project in sorted(totals):
            print(f"{project.ljust(width)}  {counts[project]:7d}  {totals[project]:6.2f}")
        print(f"{'TOTAL'.ljust(width)}  {sum(counts.values()):7d}  {sum(totals.values()):6.2f}")
    current = running_entry(entries)
    if current is not None:
        print(f"(not counted: '{current['project']}' is still running)")
    return False


EXPORT_COLUMNS = ["project", "start", "end", "hours", "note"]


def parse_date(text):
    """Parse the --since value (YYYY-MM-DD) into a date."""
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d").date()
    except ValueError:
        raise TimetrackError(f"invalid --since date {text!r}: expected YYYY-MM-DD")


def export_rows(entries, since=None):
    """Finished entries (optionally starting on or after `since`) as export rows, oldest first.

    The running timer has no end yet, so it is never exported.
    """
    rows = []
    for entry in entries:
        if entry.get("end") is None:
            continue
        start = datetime.strptime(entry["start"], TIME_FORMAT)
        if since is not None and start.date() < since:
            continue
        rows.append([entry["project"], entry["start"], entry["end"], f"{entry_hours(entry):.2f}", entry["note"]])
    rows.sort(key=lambda row: (row[1], row[0]))
    return rows


def render_csv(rows):
    """CSV text with a header line; only the header when there are no rows."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    writer.writerows(rows)
    return buf.getvalue()


def cmd_export(args, entries):
    since = parse_date(args.since) if args.since else None
    text = render_csv(export_rows(entries, since))
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print(f"Wrote {len(text.splitlines()) - 1} entries to {args.output}")
    else:
        sys.stdout.write(text)
    return False


def build_parser():
    parser = argparse.ArgumentParser(prog="timetrack", description="A tiny command-line time tracker.")
    parser.add_argument("--db", help="data file (default: $TIMETRACK_DB or ~/.timetrack/entries.json)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_start = sub.add_parser("start", help="start a timer for a project")
    p_start.add_argument("project", help="project name")
    p_start.add_argument("--note", help="free-text note stored with the entry")
    p_start.add_argument("--at", help="start time 'YYYY-MM-DD HH:MM' instead of now")
    p_start.set_defaults(func=cmd_start)

    p_stop = sub.add_parser("stop", help="stop the running timer")
    p_stop.add_argument("--note", help="note appended to the entry")
    p_stop.add_argument("--at", help="stop time 'YYYY-MM-DD HH:MM' instead of now")
    p_stop.set_defaults(func=cmd_stop)

    p_status = sub.add_parser("status", help="show the running timer, if any")
    p_status.set_defaults(func=cmd_status)

    p_report = sub.add_parser("report", help="total hours per project (finished entries)")
    p_report.add_argument("--project", help="only this project")
    p_report.set_defaults(func=cmd_report)

    p_export = sub.add_parser("export", help="write finished entries as CSV")
    p_export.add_argument("--format", choices=["csv"], default="csv", help="output format (only csv)")
    p_export.add_argument("--since", help="only entries that start on or after YYYY-MM-DD")
    p_export.add_argument("--output", help="write to this file instead of standard output")
    p_export.set_defaults(func=cmd_export)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    path = args.db or default_db_path()
    try:
        entries = load_entries(path)
        changed = args.func(args, entries)
        if changed:
            save_entries(path, entries)
    except TimetrackError as exc:
        print(f"timetrack: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
