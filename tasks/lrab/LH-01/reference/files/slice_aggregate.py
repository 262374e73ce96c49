"""Per-batch aggregation of alloy_multibatch.csv.

Usage: python3 slice_aggregate.py B03 > slice_stats_B03.md

Streams the CSV and keeps only the rows of the requested batch, so the whole file is never
held in memory. Prints a Markdown summary: row count, mean/min/max of the numeric columns,
the peak UTS with where it occurs, and the mean UTS per temperature.
"""
import csv
import sys

DATA = "alloy_multibatch.csv"
COLUMNS = ["UTS_MPa", "elongation_pct", "hardness_HV"]


def aggregate(batch):
    values = {c: [] for c in COLUMNS}
    by_temp = {}
    peak = None
    with open(DATA, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["batch_id"] != batch:
                continue
            for c in COLUMNS:
                values[c].append(float(row[c]))
            uts = float(row["UTS_MPa"])
            temp = int(row["temperature_C"])
            by_temp.setdefault(temp, []).append(uts)
            if peak is None or uts > peak[0]:
                peak = (uts, temp, int(row["time_h"]))
    return values, by_temp, peak


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 slice_aggregate.py <batch_id>")
    batch = sys.argv[1]
    values, by_temp, peak = aggregate(batch)
    if peak is None:
        sys.exit("no rows for batch %s in %s" % (batch, DATA))
    n = len(values["UTS_MPa"])
    print("# Slice statistics for batch %s" % batch)
    print()
    print("Source: `%s`, %d rows of batch %s." % (DATA, n, batch))
    print()
    print("Peak UTS: **%.1f MPa** at %d C, %d h." % peak)
    print()
    print("| column | mean | min | max |")
    print("|---|---|---|---|")
    for c in COLUMNS:
        v = values[c]
        print("| %s | %.2f | %.1f | %.1f |" % (c, sum(v) / len(v), min(v), max(v)))
    print()
    print("Mean UTS per temperature:")
    print()
    print("| temperature_C | rows | mean UTS_MPa |")
    print("|---|---|---|")
    for temp in sorted(by_temp):
        v = by_temp[temp]
        print("| %d | %d | %.1f |" % (temp, len(v), sum(v) / len(v)))


if __name__ == "__main__":
    main()
