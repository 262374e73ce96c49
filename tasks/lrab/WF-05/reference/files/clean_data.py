"""Clean messy_sensor_data.csv.

Rules, applied in this order (a row is counted under the first rule it breaks):
  1. exact duplicate of an earlier row        -> dropped (the first copy is kept)
  2. any field missing (empty)                 -> dropped
  3. status other than "ok"                    -> dropped
  4. temperature_C not a number or outside [-30, 60] -> dropped

Writes clean_data.csv (same columns, original order), validation_report.md
(rows in -> dropped per rule -> rows out) and sensor_summary.csv
(sensor_id, n, mean/min/max temperature, 2 decimals).
"""
import csv

SRC = "messy_sensor_data.csv"
T_MIN, T_MAX = -30.0, 60.0
RULES = ["exact duplicate", "missing field", "status not ok", "temperature out of range"]


def classify(row, columns, seen):
    """The first rule this row breaks, or None when it is clean."""
    key = tuple(row[c] for c in columns)
    if key in seen:
        return RULES[0]
    seen.add(key)
    if any(row[c].strip() == "" for c in columns):
        return RULES[1]
    if row["status"].strip() != "ok":
        return RULES[2]
    try:
        temp = float(row["temperature_C"])
    except ValueError:
        return RULES[3]
    if not T_MIN <= temp <= T_MAX:
        return RULES[3]
    return None


def clean(rows, columns):
    kept, dropped, seen = [], {rule: [] for rule in RULES}, set()
    for line_no, row in enumerate(rows, start=2):
        rule = classify(row, columns, seen)
        if rule is None:
            kept.append(row)
        else:
            dropped[rule].append(line_no)
    return kept, dropped


def summarize(kept):
    by_sensor = {}
    for row in kept:
        by_sensor.setdefault(row["sensor_id"], []).append(float(row["temperature_C"]))
    return [(sid, len(t), sum(t) / len(t), min(t), max(t)) for sid, t in sorted(by_sensor.items())]


def main():
    with open(SRC, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames
        rows = list(reader)
    kept, dropped = clean(rows, columns)

    with open("clean_data.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)

    summary = summarize(kept)
    with open("sensor_summary.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["sensor_id", "n", "mean_temp_C", "min_temp_C", "max_temp_C"])
        for sid, n, mean, lo, hi in summary:
            writer.writerow([sid, n, f"{mean:.2f}", f"{lo:.2f}", f"{hi:.2f}"])

    total_dropped = sum(len(v) for v in dropped.values())
    lines = ["# Validation report", "", f"Input: `{SRC}`, {len(rows)} data rows.", "",
             "| rule | rows dropped | input lines |", "|---|---|---|"]
    for rule in RULES:
        lines.append(f"| {rule} | {len(dropped[rule])} | {', '.join(map(str, dropped[rule])) or '-'} |")
    lines += [f"| **total** | **{total_dropped}** | |", "",
              f"Rows in: {len(rows)} -> dropped: {total_dropped} -> rows out: {len(kept)} (`clean_data.csv`).", "",
              "Checks on the output:",
              f"- rows in = rows out + dropped: {len(rows)} = {len(kept)} + {total_dropped} "
              f"({'ok' if len(rows) == len(kept) + total_dropped else 'MISMATCH'})",
              f"- every kept temperature is within [{T_MIN:g}, {T_MAX:g}]: "
              f"{'ok' if all(T_MIN <= float(r['temperature_C']) <= T_MAX for r in kept) else 'FAILED'}",
              f"- no empty field and no status other than ok remains: "
              f"{'ok' if all(all(r[c].strip() for c in columns) and r['status'] == 'ok' for r in kept) else 'FAILED'}",
              "", "Per-sensor temperature summary (`sensor_summary.csv`):", "",
              "| sensor_id | n | mean | min | max |", "|---|---|---|---|---|"]
    for sid, n, mean, lo, hi in summary:
        lines.append(f"| {sid} | {n} | {mean:.2f} | {lo:.2f} | {hi:.2f} |")
    with open("validation_report.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"{len(rows)} rows in, {total_dropped} dropped, {len(kept)} rows out")


if __name__ == "__main__":
    main()
