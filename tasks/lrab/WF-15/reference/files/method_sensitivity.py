"""How much do the free choices of the tangent method change the result?

The note does not say which readings define the baseline or the steep tangent,
so the onsets and the Arrhenius fit are recomputed for every combination of
  * baseline tangent through the first 2, 3 or 4 readings, and
  * steep tangent through the steepest reading and its two neighbours
    ("central3") or through the two readings with the steepest drop ("secant2").
If the claim were only a matter of method choices, one of these six variants
should come close to 152 kJ/mol.

Writes method_sensitivity.csv and prints the range of Ea.

Usage: python method_sensitivity.py [RAW_CSV] [OUT_CSV]
"""

import csv
import sys

import arrhenius_fit
import onset_finder
import values


def main(argv):
    raw = argv[1] if len(argv) > 1 else values.RAW_FILE
    out = argv[2] if len(argv) > 2 else "method_sensitivity.csv"
    times, runs = onset_finder.read_runs(raw)
    rows = []
    for baseline_points in (2, 3, 4):
        for steep in ("central3", "secant2"):
            onsets = {t: onset_finder.onset(times, runs[t], baseline_points, steep)["onset_min"]
                      for t in values.SETPOINTS_C}
            fit = arrhenius_fit.arrhenius(onsets)
            rows.append([baseline_points, steep] + [f"{onsets[t]:.1f}" for t in values.SETPOINTS_C]
                        + [fit["Ea_kJ_per_mol"], fit["R2"],
                           arrhenius_fit.monotonic_decreasing(onsets)])
    header = (["baseline_points", "steep_tangent"]
              + [f"onset_{t}C_min" for t in values.SETPOINTS_C]
              + ["Ea_kJ_per_mol", "R2", "monotonic"])
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    eas = [r[-3] for r in rows]
    r2s = [r[-2] for r in rows]
    print(f"{len(rows)} method variants: Ea {min(eas)} to {max(eas)} kJ/mol, "
          f"R^2 {min(r2s)} to {max(r2s)}, monotonic in none: {not any(r[-1] for r in rows)}")
    print(f"claimed {values.CLAIMED_EA_KJ_PER_MOL} kJ/mol is "
          + ("inside" if min(eas) <= values.CLAIMED_EA_KJ_PER_MOL <= max(eas) else "outside")
          + " this range")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
