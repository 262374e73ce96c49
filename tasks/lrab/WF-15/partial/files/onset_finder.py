"""Onset times by the tangent-intersection method (TN-2025-041, procedure step 4).

For each run (column R_<T>C of raw_measurements.csv):
  * baseline tangent: least-squares line through the first BASELINE_POINTS
    readings (the initial plateau; every run is still flat there);
  * steepest-decrease tangent: least-squares line through the reading with the
    most negative central difference (R[i+1]-R[i-1])/(t[i+1]-t[i-1]) and its
    two neighbours (the central difference copes with the uneven spacing
    after 150 min);
  * onset = time coordinate of the intersection of the two lines.

Writes onsets.csv with one row per run, including both tangents so the result
can be checked by hand.

Usage: python onset_finder.py [RAW_CSV] [OUT_CSV]
"""

import csv
import sys

import values


def read_runs(path):
    """Return (times, {setpoint_C: resistances}) and validate the table."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != values.EXPECTED_ROWS:
        raise SystemExit(f"{path}: expected {values.EXPECTED_ROWS} rows, found {len(rows)}")
    times = [float(r[values.TIME_COLUMN]) for r in rows]
    if any(b <= a for a, b in zip(times, times[1:])):
        raise SystemExit(f"{path}: {values.TIME_COLUMN} is not strictly increasing")
    runs = {}
    for temp, column in values.COLUMNS.items():
        runs[temp] = [float(r[column]) for r in rows]
    return times, runs


def line_fit(xs, ys):
    """Least-squares slope and intercept."""
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return slope, my - slope * mx


def steepest_index(times, res):
    """Index of the reading with the most negative central difference."""
    best, best_slope = None, None
    for i in range(1, len(times) - 1):
        slope = (res[i + 1] - res[i - 1]) / (times[i + 1] - times[i - 1])
        if best_slope is None or slope < best_slope:
            best, best_slope = i, slope
    return best


def steepest_segment(times, res):
    """Index i of the most negative forward difference between readings i and i+1."""
    slopes = [(res[i + 1] - res[i]) / (times[i + 1] - times[i]) for i in range(len(times) - 1)]
    return min(range(len(slopes)), key=lambda i: slopes[i])


def onset(times, res, baseline_points=None, steep="central3"):
    """Tangent-intersection onset and the details needed to audit it.

    `steep` selects the steep tangent: "central3" (default, see module doc)
    or "secant2" (the line through the two readings with the steepest drop),
    used by method_sensitivity.py to show how much the choice matters.
    """
    k = baseline_points or values.BASELINE_POINTS
    base_m, base_b = line_fit(times[:k], res[:k])
    if steep == "central3":
        i = steepest_index(times, res)
        half = values.STEEP_POINTS // 2
        lo, hi = max(0, i - half), min(len(times), i + half + 1)
    elif steep == "secant2":
        i = steepest_segment(times, res)
        lo, hi = i, i + 2
    else:
        raise ValueError(f"unknown steep tangent variant {steep!r}")
    steep_m, steep_b = line_fit(times[lo:hi], res[lo:hi])
    if steep_m >= base_m:
        raise ValueError("no decrease steeper than the baseline")
    t_on = (base_b - steep_b) / (steep_m - base_m)
    return {
        "onset_min": t_on,
        "baseline_slope": base_m,
        "baseline_intercept": base_b,
        "steep_at_min": times[i],
        "steep_slope": steep_m,
        "steep_intercept": steep_b,
        "total_drop": res[0] - res[-1],
    }


def main(argv):
    raw = argv[1] if len(argv) > 1 else values.RAW_FILE
    out = argv[2] if len(argv) > 2 else "onsets.csv"
    times, runs = read_runs(raw)
    fields = ["setpoint_C", "T_K", "onset_min", "reported_onset_min", "steep_at_min",
              "baseline_slope_mohm_per_min", "steep_slope_mohm_per_min", "total_drop_mohm"]
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(fields)
        for temp in values.SETPOINTS_C:
            r = onset(times, runs[temp])
            writer.writerow([
                temp, f"{values.kelvin(temp):.2f}", f"{r['onset_min']:.1f}",
                f"{values.REPORTED_ONSETS_MIN[temp]:g}", f"{r['steep_at_min']:g}",
                f"{r['baseline_slope']:.5f}", f"{r['steep_slope']:.5f}", f"{r['total_drop']:.3f}",
            ])
            print(f"{temp} C: onset {r['onset_min']:.1f} min "
                  f"(reported {values.REPORTED_ONSETS_MIN[temp]:g}), "
                  f"steepest at {r['steep_at_min']:g} min")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
