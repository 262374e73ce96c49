"""Frozen reference: run the UNCHANGED legacy code and record its outputs.

The legacy module is imported as-is (no edits), so reference_outputs.json is
the ground truth the optimized version must reproduce exactly.

Usage: python reference_impl.py [CORPUS_DIR] [OUT_JSON] [TOP_N]
"""

import json
import sys

import legacy_slow_code


def run(folder, n=20):
    return legacy_slow_code.analyse(folder, n)


def main(argv):
    folder = argv[1] if len(argv) > 1 else "corpus"
    out = argv[2] if len(argv) > 2 else "reference_outputs.json"
    n = int(argv[3]) if len(argv) > 3 else 20
    result = run(folder, n)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print("reference: %d files, %d terms, %d unique lines -> %s"
          % (result["files"], result["total_terms"],
             result["unique_line_count"], out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
