"""First cut of the cleaning script: applies the four rules and writes clean_data.csv.
(The validation report and the per-sensor summary are not written yet.)"""
import csv

with open("messy_sensor_data.csv", newline="", encoding="utf-8") as fh:
    reader = csv.DictReader(fh)
    columns = reader.fieldnames
    rows = list(reader)

seen, kept = set(), []
for row in rows:
    key = tuple(row[c] for c in columns)
    if key in seen:
        continue
    seen.add(key)
    if any(row[c].strip() == "" for c in columns) or row["status"] != "ok":
        continue
    if not -30 <= float(row["temperature_C"]) <= 60:
        continue
    kept.append(row)

with open("clean_data.csv", "w", newline="", encoding="utf-8") as fh:
    writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(kept)
print(len(rows), "rows in,", len(kept), "rows out")
