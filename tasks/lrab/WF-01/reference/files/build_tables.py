"""Build shortlist.md, data_table.md and references.md from papers_db.jsonl.

The relevance decision (which records are about aging of titanium alloys) was made by
reading every abstract; it is recorded in RELEVANT so the tables are reproducible.
"""
import json

RELEVANT = ["S001", "S002", "S003", "S004", "S005", "S007", "S008", "S012"]


def load(path="papers_db.jsonl"):
    records = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                rec = json.loads(line)
                records[rec["id"]] = rec
    return records


def cell(value):
    return "n/r" if value is None else str(value)


def main():
    records = load()
    chosen = [records[i] for i in RELEVANT]

    lines = ["# Shortlist: aging of titanium alloys", "",
             f"{len(chosen)} of {len(records)} records are about aging heat treatment of titanium alloys.", "",
             "| id | title | first author | year | DOI |", "|---|---|---|---|---|"]
    for r in chosen:
        lines.append(f"| {r['id']} | {r['title']} | {r['authors'][0]} | {r['year']} | {r['doi']} |")
    excluded = [r for r in records.values() if r["id"] not in RELEVANT]
    lines += ["", "Excluded (not aging of a titanium alloy): " +
              ", ".join(f"{r['id']} ({r['alloy']}, {', '.join(r['keywords'][1:3])})" for r in excluded) + "."]
    with open("shortlist.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")

    lines = ["# Data table: reported aging conditions and tensile properties", "",
             "| id | alloy | aging temperature (°C) | aging time (h) | UTS (MPa) | elongation (%) |",
             "|---|---|---|---|---|---|"]
    for r in chosen:
        d = r["data"]
        lines.append(f"| {r['id']} | {r['alloy']} | {cell(d.get('aging_temp_C'))} | {cell(d.get('aging_time_h'))} "
                     f"| {cell(d.get('UTS_MPa'))} | {cell(d.get('elongation_pct'))} |")
    lines += ["", "Values are the best (headline) condition each record reports; n/r = not reported.",
              "S003 used a 300 °C pre-age before the 600 °C main age."]
    with open("data_table.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")

    lines = ["# References", ""]
    for r in chosen:
        authors = "; ".join(r["authors"])
        lines.append(f"[{r['id']}] {authors} ({r['year']}). {r['title']}. *{r['venue']}* "
                     f"{r['volume']}, {r['pages']}. https://doi.org/{r['doi']}")
        lines.append("")
    with open("references.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


if __name__ == "__main__":
    main()
