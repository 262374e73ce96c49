"""Arrhenius fit of the onset times (TN-2025-041, procedure step 5).

Model: t_on = t0 * exp(Ea / (R T))  =>  ln(t_on) = ln(t0) + (Ea / R) * (1 / T).
An ordinary least-squares line of ln(t_on) against 1/T gives Ea = R * slope;
the standard error of the slope gives the uncertainty of Ea, and R^2 the
quality of the straight-line description.

Three fits are reported so the claim can be audited:
  * recomputed   - onsets from onset_finder.py (onsets.csv), all five runs;
  * without 540 C - the same, leaving out the run measured after the furnace
                    service (the only one out of temperature order);
  * as reported  - Table 1 of the note, to check that the claimed 152 kJ/mol
                    at least follows from the note's own table.

Writes arrhenius_results.json and the figure fig_arrhenius.png
(ln t_on vs 1000/T, recomputed and reported onsets with their fit lines).

Usage: python arrhenius_fit.py [ONSETS_CSV] [RESULTS_JSON] [FIGURE_PNG]
"""

import csv
import json
import math
import sys

import png_plot
import values


def linear_regression(xs, ys):
    """Slope, intercept, R^2 and standard error of the slope (OLS)."""
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    r2 = 1.0 - ss_res / ss_tot
    se = math.sqrt(ss_res / (n - 2) / sxx) if n > 2 else float("nan")
    return slope, intercept, r2, se


def arrhenius(onsets):
    """Fit {setpoint_C: t_on_min}; return a JSON-ready summary."""
    temps = sorted(onsets)
    xs = [1.0 / values.kelvin(t) for t in temps]
    ys = [math.log(onsets[t]) for t in temps]
    slope, intercept, r2, se = linear_regression(xs, ys)
    return {
        "setpoints_C": temps,
        "onsets_min": [round(onsets[t], 2) for t in temps],
        "Ea_kJ_per_mol": round(values.R_GAS * slope / 1000.0, 1),
        "Ea_std_error_kJ_per_mol": round(values.R_GAS * se / 1000.0, 1),
        "R2": round(r2, 4),
        "ln_t0": round(intercept, 3),
        "slope_K": round(slope, 1),
    }


def monotonic_decreasing(onsets):
    temps = sorted(onsets)
    return all(onsets[a] > onsets[b] for a, b in zip(temps, temps[1:]))


def read_onsets(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {int(r["setpoint_C"]): float(r["onset_min"]) for r in csv.DictReader(handle)}


def draw_figure(path, recomputed, reported, fit_all, fit_rep):
    canvas = png_plot.Canvas(720, 540)
    xs_all = [1000.0 / values.kelvin(t) for t in values.SETPOINTS_C]
    ys_all = [math.log(v) for d in (recomputed, reported) for v in d.values()]
    xlim = (min(xs_all) - 0.01, max(xs_all) + 0.025)
    ylim = (math.floor(min(ys_all) * 2) / 2 - 0.25, math.ceil(max(ys_all) * 2) / 2 + 0.25)
    plot = png_plot.Plot(canvas, (110, 70, 690, 420), xlim, ylim)
    canvas.text(110, 14, "Arrhenius plot: onset of precipitation, FCN-17", scale=3)
    plot.axes("1000/T (1/K)", "ln(t_on / min)", xfmt="%.2f", yfmt="%.1f")
    blue, red = (20, 80, 200), (200, 40, 40)
    for fit, color, dash in ((fit_all, blue, 0), (fit_rep, red, 6)):
        slope_k = fit["slope_K"] / 1000.0  # per (1000/T)
        line_x = [xlim[0], xlim[1]]
        plot.polyline(line_x, [fit["ln_t0"] + slope_k * x for x in line_x], color, width=2, dash=dash)
    for t in values.SETPOINTS_C:
        x = 1000.0 / values.kelvin(t)
        canvas.disc(plot.px(x), plot.py(math.log(recomputed[t])), 6, blue)
        canvas.square(plot.px(x), plot.py(math.log(reported[t])), 5, red)
        canvas.text(int(plot.px(x)) + 9, int(plot.py(math.log(recomputed[t]))) - 4, "%d C" % t, blue)
    legend = [
        (blue, "recomputed from raw data: Ea = %.0f kJ/mol, R^2 = %.2f"
         % (fit_all["Ea_kJ_per_mol"], fit_all["R2"])),
        (red, "reported (Table 1): Ea = %.0f kJ/mol, R^2 = %.3f"
         % (fit_rep["Ea_kJ_per_mol"], fit_rep["R2"])),
    ]
    for k, (color, label) in enumerate(legend):
        y = 485 + 22 * k
        canvas.rect(110, y, 130, y + 9, color)
        canvas.text(140, y, label, color)
    canvas.save(path)


def main(argv):
    onsets_path = argv[1] if len(argv) > 1 else "onsets.csv"
    results_path = argv[2] if len(argv) > 2 else "arrhenius_results.json"
    figure_path = argv[3] if len(argv) > 3 else "fig_arrhenius.png"
    recomputed = read_onsets(onsets_path)
    reported = dict(values.REPORTED_ONSETS_MIN)
    fit_all = arrhenius(recomputed)
    fit_wo540 = arrhenius({t: v for t, v in recomputed.items() if t != 540})
    fit_rep = arrhenius(reported)
    reproduced = abs(fit_all["Ea_kJ_per_mol"] - values.CLAIMED_EA_KJ_PER_MOL) <= \
        2 * fit_all["Ea_std_error_kJ_per_mol"]
    results = {
        "claimed_Ea_kJ_per_mol": values.CLAIMED_EA_KJ_PER_MOL,
        "recomputed_all_runs": fit_all,
        "recomputed_without_540C": fit_wo540,
        "reported_table1": fit_rep,
        "recomputed_onsets_monotonic": monotonic_decreasing(recomputed),
        "claim_within_2_standard_errors": reproduced,
    }
    with open(results_path, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2, sort_keys=True)
        handle.write("\n")
    draw_figure(figure_path, recomputed, reported, fit_all, fit_rep)
    for name in ("recomputed_all_runs", "recomputed_without_540C", "reported_table1"):
        fit = results[name]
        print(f"{name}: Ea = {fit['Ea_kJ_per_mol']} +/- {fit['Ea_std_error_kJ_per_mol']} kJ/mol, "
              f"R^2 = {fit['R2']}")
    print(f"recomputed onsets decrease monotonically with T: {results['recomputed_onsets_monotonic']}")
    print("claimed 152 kJ/mol " + ("REPRODUCED" if reproduced else "NOT REPRODUCED")
          + " by the raw data")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
