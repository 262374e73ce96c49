"""Arrhenius fit of onsets.csv (draft: prints Ea and R^2, no figure yet)."""

import csv
import math

import values


def main():
    with open("onsets.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    xs = [1.0 / values.kelvin(int(r["setpoint_C"])) for r in rows]
    ys = [math.log(float(r["onset_min"])) for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    ss_res = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    print("Ea = %.1f kJ/mol, R^2 = %.3f" % (values.R_GAS * slope / 1000, 1 - ss_res / ss_tot))


if __name__ == "__main__":
    main()
