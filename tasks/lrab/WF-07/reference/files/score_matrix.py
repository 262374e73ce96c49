"""Weighted scoring of the finalists: reads the weights from criteria.md, writes comparison_matrix.md."""
import re

# Scores 1-5 per criterion with a one-line justification (from the sources in sources.md).
SCORES = {
    "Qdrant": {
        "C1": (5, "single binary, no external services"),
        "C2": (4, "one process, snapshots for backup; a new system to learn"),
        "C3": (5, "payload filters applied during HNSW search"),
        "C4": (4, "quantization and on-disk storage; cluster mode if ever needed"),
        "C5": (5, "official Python client with local in-process mode"),
        "C6": (4, "Apache-2.0, active project"),
    },
    "pgvector": {
        "C1": (5, "runs inside PostgreSQL, nothing else"),
        "C2": (4, "standard PostgreSQL backup/restore, but PostgreSQL itself must be run well"),
        "C3": (4, "full SQL filters; approximate search needs per-query tuning with filters"),
        "C4": (3, "memory and index-build planning needed at 10 M vectors"),
        "C5": (4, "any PostgreSQL driver; no embedded mode"),
        "C6": (5, "PostgreSQL license, widely used"),
    },
    "LanceDB": {
        "C1": (5, "embedded library, files on local disk"),
        "C2": (5, "nothing to operate; backup is a file copy"),
        "C3": (3, "SQL-like filters; IVF-PQ recall needs tuning"),
        "C4": (4, "disk-based indexes keep RAM low"),
        "C5": (5, "native Python API, Arrow/pandas integration"),
        "C6": (3, "Apache-2.0 but a younger project; multi-writer concurrency needs care"),
    },
    "Weaviate": {
        "C1": (4, "self-contained server; vectorizer modules must point at local models"),
        "C2": (3, "schema definition and more configuration"),
        "C3": (5, "property filters plus hybrid BM25 search"),
        "C4": (4, "compression and horizontal scaling"),
        "C5": (4, "Python client; embedded mode only for experiments"),
        "C6": (4, "BSD-3-Clause, active project"),
    },
}


def read_weights(path="criteria.md"):
    weights = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"\|\s*(C\d+)\s*\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|", line)
            if m:
                weights[m.group(1)] = (m.group(2), int(m.group(3)))
    if sum(w for _, w in weights.values()) != 100:
        raise SystemExit(f"criteria.md weights sum to {sum(w for _, w in weights.values())}, not 100")
    return weights


def main():
    weights = read_weights()
    ids = sorted(weights, key=lambda c: int(c[1:]))
    totals = {name: sum(weights[c][1] * SCORES[name][c][0] for c in ids) / 100 for name in SCORES}
    ranking = sorted(totals, key=lambda n: -totals[n])
    out = ["# Comparison matrix", "", "Scores 1-5; weighted total = sum(weight x score) / 100 (max 5.00).", "",
           "| criterion | weight | " + " | ".join(ranking) + " |",
           "|---|---|" + "---|" * len(ranking)]
    for c in ids:
        out.append(f"| {c} {weights[c][0]} | {weights[c][1]} | " + " | ".join(str(SCORES[n][c][0]) for n in ranking) + " |")
    out.append("| **weighted total** | 100 | " + " | ".join(f"**{totals[n]:.2f}**" for n in ranking) + " |")
    out += ["", "Ranking: " + " > ".join(f"{n} ({totals[n]:.2f})" for n in ranking), "", "## Justifications", ""]
    for n in ranking:
        out.append(f"- **{n}:** " + "; ".join(f"{c} {SCORES[n][c][0]} - {SCORES[n][c][1]}" for c in ids))
    with open("comparison_matrix.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
    print("Ranking:", ", ".join(f"{n} {totals[n]:.2f}" for n in ranking))


if __name__ == "__main__":
    main()
