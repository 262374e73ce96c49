"""Descriptive statistics of aging_data.csv -> descriptive_stats.md."""
import csv
import statistics

COLUMNS = ["aging_temperature_C", "aging_time_h", "UTS_MPa", "elongation_pct", "hardness_HV", "alpha_fraction_pct"]


def table(rows, title):
    out = [f"## {title} (n = {len(rows)})", "", "| column | count | mean | std | min | max |", "|---|---|---|---|---|---|"]
    for col in COLUMNS:
        vals = [float(r[col]) for r in rows]
        std = statistics.stdev(vals) if len(vals) > 1 else 0.0
        out.append(f"| {col} | {len(vals)} | {statistics.mean(vals):.2f} | {std:.2f} | {min(vals):g} | {max(vals):g} |")
    return out + [""]


def main():
    with open("aging_data.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = ["# Descriptive statistics: aging_data.csv", "",
           f"{len(rows)} rows, heats: {', '.join(sorted({r['heat_id'] for r in rows}))}. "
           "std is the sample standard deviation.", ""]
    out += table(rows, "All rows")
    for t in sorted({r["aging_time_h"] for r in rows}, key=float):
        out += table([r for r in rows if r["aging_time_h"] == t], f"Aging time {t} h")
    uts = [float(r["UTS_MPa"]) for r in rows]
    hv = [float(r["hardness_HV"]) for r in rows]
    el = [float(r["elongation_pct"]) for r in rows]
    out += ["## Correlations (Pearson, all rows)", "",
            f"- UTS vs hardness: {statistics.correlation(uts, hv):.3f}",
            f"- UTS vs elongation: {statistics.correlation(uts, el):.3f}", ""]
    with open("descriptive_stats.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))


if __name__ == "__main__":
    main()
