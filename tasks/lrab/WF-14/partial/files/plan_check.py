"""Check the HummingNote 2.0 plan arithmetic.

Reads the estimate table of effort_estimates.md (rows starting with `| R`,
`| B-` or `| X-`), recomputes every PERT value (O + 4M + P) / 6, sums the
in-scope work, compares it with the team capacity derived from the calendar in
requirements_doc.md, and replays the 30 % overrun scenario: all in-scope work
grows by 30 %, then items are cut in their `Cut order` until the work fits.

Exits 1 if a printed PERT value is wrong or the baseline plan does not fit.

Usage: python plan_check.py [ESTIMATES_MD]
"""

import re
import sys

# Calendar facts from requirements_doc.md.
DEVS = 3
DEV_HOURS_PER_WEEK = 30
QA_HOURS_PER_WEEK = 35
WEEKS = 12
HOLIDAY_DAYS = 2            # Good Friday (week 5), Easter Monday (week 6)
DEV_ABSENCE_HOURS = 30      # Luis, week 7
RC_PASS_HOURS = 60
OVERRUN = 0.30


def capacities():
    dev = DEVS * DEV_HOURS_PER_WEEK * WEEKS
    dev -= DEVS * HOLIDAY_DAYS * DEV_HOURS_PER_WEEK / 5
    dev -= DEV_ABSENCE_HOURS
    qa = QA_HOURS_PER_WEEK * WEEKS - HOLIDAY_DAYS * QA_HOURS_PER_WEEK / 5
    return dev, qa


def read_items(path):
    items = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not re.fullmatch(r"(R\d+|B-\d+|X-[A-Z]+)", cells[0]):
                continue
            o, m, p, pert = (float(c) for c in cells[2:6])
            items.append({"id": cells[0], "name": cells[1], "o": o, "m": m, "p": p,
                          "pert": pert, "scope": cells[6], "cut": cells[7]})
    return items


def main(argv):
    path = argv[1] if len(argv) > 1 else "effort_estimates.md"
    items = read_items(path)
    errors = 0
    for it in items:
        expected = (it["o"] + 4 * it["m"] + it["p"]) / 6
        if abs(expected - it["pert"]) > 0.05:
            print(f"ERROR {it['id']}: PERT printed {it['pert']} but (O+4M+P)/6 = {expected:.1f}")
            errors += 1
    dev_cap, qa_cap = capacities()
    in_scope = [it for it in items if it["scope"] == "in"]
    deferred = [it for it in items if it["scope"] != "in"]
    work = sum(it["pert"] for it in in_scope)
    print(f"developer capacity: {dev_cap:.0f} h; QA capacity: {qa_cap:.0f} h")
    print(f"in scope: {len(in_scope)} items, {work:.1f} h PERT = {100 * work / dev_cap:.1f} % "
          f"of developer capacity")
    print("deferred to 2.1 from the start: "
          + ", ".join(f"{it['id']} ({it['pert']:.1f} h)" for it in deferred))
    rc_hours = 2 * RC_PASS_HOURS
    print(f"QA: 2 RC passes (beta RC, GA RC) = {rc_hours} h, "
          f"{qa_cap - rc_hours:.0f} h left for feature testing; one pass takes "
          f"{RC_PASS_HOURS / QA_HOURS_PER_WEEK:.1f} weeks of the QA engineer")
    if work > dev_cap:
        print("ERROR baseline plan exceeds developer capacity")
        errors += 1

    # 30 % overrun: everything except the fixed reserves grows by 30 %.
    grown = {it["id"]: it["pert"] * (1 + OVERRUN) if not it["id"].startswith("X-")
             else it["pert"] for it in in_scope}
    total = sum(grown.values())
    print(f"with a {int(OVERRUN * 100)} % overrun: {total:.1f} h, "
          f"{total - dev_cap:.1f} h over capacity")
    cuttable = sorted((it for it in in_scope if it["cut"].isdigit()), key=lambda it: int(it["cut"]))
    cuts = []
    for it in cuttable:
        if total <= dev_cap:
            break
        total -= grown[it["id"]]
        cuts.append(it)
        print(f"  cut {it['cut']}: {it['id']} {it['name']} saves {grown[it['id']]:.1f} h "
              f"-> {total:.1f} h")
    fits = total <= dev_cap
    print(f"after cutting {', '.join(it['id'] for it in cuts) or 'nothing'}: {total:.1f} h of "
          f"{dev_cap:.0f} h ({100 * total / dev_cap:.1f} %) - {'fits' if fits else 'DOES NOT FIT'}")
    if not fits:
        errors += 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
