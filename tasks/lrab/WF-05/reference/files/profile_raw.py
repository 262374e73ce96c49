"""Profile messy_sensor_data.csv before cleaning and write profile_raw.md."""
import csv
from collections import Counter

SRC = "messy_sensor_data.csv"
NUMERIC = ["temperature_C", "humidity_pct", "pressure_hPa"]


def to_float(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    with open(SRC, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames
        rows = list(reader)
    out = ["# Raw data profile: messy_sensor_data.csv", "",
           f"- Data rows: {len(rows)} (plus one header line)",
           f"- Columns ({len(columns)}): {', '.join(columns)}",
           f"- Time span: {min(r['timestamp'] for r in rows)} to {max(r['timestamp'] for r in rows)}", ""]
    out += ["## Per column", "", "| column | missing | distinct | min | max |", "|---|---|---|---|---|"]
    for col in columns:
        values = [r[col] for r in rows]
        missing = sum(1 for v in values if v.strip() == "")
        present = [v for v in values if v.strip() != ""]
        if col in NUMERIC:
            nums = [to_float(v) for v in present]
            nums = [n for n in nums if n is not None]
            lo, hi = (f"{min(nums):g}", f"{max(nums):g}") if nums else ("-", "-")
        else:
            lo, hi = min(present), max(present)
        out.append(f"| {col} | {missing} | {len(set(present))} | {lo} | {hi} |")
    out += ["", "## Categorical values", ""]
    for col in ["sensor_id", "status"]:
        counts = Counter(r[col] for r in rows)
        out.append(f"- {col}: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    seen, dups = set(), []
    for i, r in enumerate(rows, start=2):
        key = tuple(r[c] for c in columns)
        if key in seen:
            dups.append(i)
        seen.add(key)
    out += ["", "## Problems found", ""]
    for i, r in enumerate(rows, start=2):
        t = to_float(r["temperature_C"])
        if t is not None and not -30 <= t <= 60:
            out.append(f"- line {i}: temperature_C = {r['temperature_C']} is outside [-30, 60] "
                       f"({'sentinel/error code' if t > 1000 else 'implausible for this site'})")
        for col in columns:
            if r[col].strip() == "":
                out.append(f"- line {i}: {col} is empty")
        if r["status"] != "ok":
            out.append(f"- line {i}: status = {r['status']}")
    for i in dups:
        out.append(f"- line {i}: exact duplicate of an earlier row")
    with open("profile_raw.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
