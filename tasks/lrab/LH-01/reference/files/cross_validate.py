"""Cross-check the slice files against one independent pass over the CSV.

Reads the peak from each slice_stats_BXX.md, recomputes every batch's peak UTS directly from
alloy_multibatch.csv, and writes cross_validation.json with both values, an agreement flag
per batch and the ranking by peak UTS (highest first).
"""
import csv
import json
import re

DATA = "alloy_multibatch.csv"
PEAK_LINE = re.compile(r"Peak UTS: \*\*([0-9.]+) MPa\*\*")


def recompute():
    peaks = {}
    with open(DATA, newline="") as fh:
        for row in csv.DictReader(fh):
            b = row["batch_id"]
            uts = float(row["UTS_MPa"])
            if b not in peaks or uts > peaks[b]:
                peaks[b] = uts
    return peaks


def slice_peak(batch):
    with open("slice_stats_%s.md" % batch) as fh:
        m = PEAK_LINE.search(fh.read())
    return float(m.group(1)) if m else None


def main():
    independent = recompute()
    batches = {}
    for b in sorted(independent):
        from_slice = slice_peak(b)
        batches[b] = {
            "slice_peak_UTS_MPa": from_slice,
            "recomputed_peak_UTS_MPa": independent[b],
            "agree": from_slice is not None and abs(from_slice - independent[b]) < 0.05,
        }
    ranking = sorted(independent, key=lambda b: -independent[b])
    out = {
        "source": DATA,
        "batches": batches,
        "ranking_by_peak_UTS": ranking,
        "all_agree": all(v["agree"] for v in batches.values()),
    }
    with open("cross_validation.json", "w") as fh:
        json.dump(out, fh, indent=2)
        fh.write("\n")
    print("ranking:", " > ".join(ranking), "| all agree:", out["all_agree"])


if __name__ == "__main__":
    main()
