"""Find trend-breaking drops in the per-temperature mean UTS of every batch.

For each batch and each interior temperature, the residual is the mean UTS there minus the
average of the means at the two neighbouring temperatures. Within a batch UTS rises steadily
with temperature, so a clearly negative residual is a drop that breaks the trend. Writes
anomalies.md (human readable) and anomalies.json (for the report).
"""
import csv
import json

DATA = "alloy_multibatch.csv"
THRESHOLD_MPA = -40.0


def level_means():
    acc = {}
    with open(DATA, newline="") as fh:
        for row in csv.DictReader(fh):
            key = (row["batch_id"], int(row["temperature_C"]))
            s, n = acc.get(key, (0.0, 0))
            acc[key] = (s + float(row["UTS_MPa"]), n + 1)
    means = {}
    for (b, t), (s, n) in acc.items():
        means.setdefault(b, {})[t] = s / n
    return means


def main():
    means = level_means()
    found = []
    for b in sorted(means):
        temps = sorted(means[b])
        for i in range(1, len(temps) - 1):
            lo, t, hi = temps[i - 1], temps[i], temps[i + 1]
            residual = means[b][t] - (means[b][lo] + means[b][hi]) / 2
            if residual < THRESHOLD_MPA:
                found.append({
                    "batch": b,
                    "temperature_C": t,
                    "drop_MPa": round(-residual, 1),
                    "mean_below": round(means[b][lo], 1),
                    "mean_at": round(means[b][t], 1),
                    "mean_above": round(means[b][hi], 1),
                    "below_C": lo,
                    "above_C": hi,
                })
    found.sort(key=lambda a: -a["drop_MPa"])
    with open("anomalies.json", "w") as fh:
        json.dump(found, fh, indent=2)
        fh.write("\n")
    lines = ["# Anomalies in alloy_multibatch.csv", ""]
    lines.append(
        "Method: mean UTS per batch and temperature; a temperature is anomalous when its mean "
        "lies more than %.0f MPa below the average of its two neighbouring temperatures."
        % -THRESHOLD_MPA
    )
    lines.append("")
    if not found:
        lines.append("No anomaly found.")
    for a in found:
        lines.append(
            "- **%s at %d C**: mean UTS %.1f MPa, against %.1f MPa at %d C and %.1f MPa at %d C "
            "(a drop of %.1f MPa below the local trend)."
            % (a["batch"], a["temperature_C"], a["mean_at"], a["mean_below"], a["below_C"],
               a["mean_above"], a["above_C"], a["drop_MPa"])
        )
    with open("anomalies.md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    for a in found:
        print("anomaly:", a["batch"], a["temperature_C"], "C, drop", a["drop_MPa"], "MPa")


if __name__ == "__main__":
    main()
