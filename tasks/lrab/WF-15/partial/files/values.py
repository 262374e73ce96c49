"""Values transcribed from experiment_description.md (TN-2025-041).

Kept in one place so that every script uses the same constants and the audit
can point at exactly what was taken from the note.
"""

# Gas constant used by the note (J/(mol K)); CODATA value 8.314462618.
R_GAS = 8.314

# Offset between degrees Celsius and kelvin.
KELVIN_OFFSET = 273.15

# Set-point temperatures (C) and the matching raw-data columns.
SETPOINTS_C = [500, 520, 540, 560, 580]
COLUMNS = {t: "R_%dC" % t for t in SETPOINTS_C}

# Raw data file and its time column (minutes since reaching the set-point).
RAW_FILE = "raw_measurements.csv"
TIME_COLUMN = "t_min"
EXPECTED_ROWS = 18

# Table 1 of the note: reported onset times (min).
REPORTED_ONSETS_MIN = {500: 118.0, 520: 65.0, 540: 37.0, 560: 21.5, 580: 13.0}

# The claim under audit.
CLAIMED_EA_KJ_PER_MOL = 152.0
CLAIMED_R2_AT_LEAST = 0.99

# Method parameters of our re-evaluation (documented in audit_report.md):
# the baseline tangent is fitted to the first BASELINE_POINTS readings, the
# steepest-decrease tangent to the reading with the most negative central
# difference and its two neighbours.
BASELINE_POINTS = 3
STEEP_POINTS = 3


def kelvin(celsius):
    return celsius + KELVIN_OFFSET
