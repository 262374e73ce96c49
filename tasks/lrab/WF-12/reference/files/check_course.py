"""Consistency checks for the course package (run after every edit).

- all required files exist and are non-empty;
- week_by_week.md has exactly the headings Week 1 .. Week 8, in order;
- every exam_blueprint.md table row adds up to its Total column, and the
  column totals and the grand total (100) agree;
- the assessment weights in course_overview.md sum to 100 %;
- prerequisites_and_resources.md lists at least 5 distinct URLs.

Prints one line per check and exits 1 if any fails.
"""

import os
import re
import sys

REQUIRED = ["course_overview.md", "week_by_week.md", "lecture_outlines/week1.md",
            "lecture_outlines/week2.md", "labs/lab1.md", "exam_blueprint.md",
            "prerequisites_and_resources.md"]


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def check_files():
    missing = [p for p in REQUIRED if not os.path.isfile(p) or os.path.getsize(p) == 0]
    return not missing, f"required files present ({len(REQUIRED) - len(missing)}/{len(REQUIRED)})"


def check_weeks():
    weeks = [int(n) for n in re.findall(r"^## Week (\d+)\b", read("week_by_week.md"), re.M)]
    return weeks == list(range(1, 9)), f"week headings {weeks}"


def check_blueprint():
    rows = []
    for line in read("exam_blueprint.md").splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and all(re.fullmatch(r"\d+", c) for c in cells[1:]):
            rows.append((cells[0], [int(c) for c in cells[1:]]))
    body = [r for r in rows if r[0] != "Total"]
    total = [r for r in rows if r[0] == "Total"]
    ok = bool(body) and len(total) == 1
    ok = ok and all(sum(v[:3]) == v[3] for _, v in rows)
    if ok:
        columns = [sum(v[i] for _, v in body) for i in range(4)]
        ok = columns == total[0][1] and total[0][1][3] == 100
    return ok, f"exam blueprint: {len(body)} topic rows, sums consistent = {ok}"


def check_assessment():
    text = read("course_overview.md")
    section = text.split("## Assessment", 1)[1].split("\n## ", 1)[0]
    weights = [int(w) for w in re.findall(r"(\d+)\s*%", section)]
    return sum(weights) == 100, f"assessment weights {weights} sum to {sum(weights)}"


def check_urls():
    urls = set(re.findall(r"https?://[^\s|)]+", read("prerequisites_and_resources.md")))
    return len(urls) >= 5, f"{len(urls)} distinct resource URLs"


def main():
    failed = 0
    for check in (check_files, check_weeks, check_blueprint, check_assessment, check_urls):
        try:
            ok, message = check()
        except (OSError, IndexError, ValueError) as exc:
            ok, message = False, f"{check.__name__}: {exc}"
        print(("PASS " if ok else "FAIL ") + message)
        failed += not ok
    print("all checks passed" if not failed else f"{failed} check(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
