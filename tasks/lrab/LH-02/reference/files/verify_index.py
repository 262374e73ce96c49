"""Independent second pass: recount with a plain dict and slicing instead of Counter and
compare with freq_index.json. Exits non-zero on any difference."""
import json
import sys

index = json.load(open("freq_index.json"))
counts = {}
total = 0
seen = set()
repeats = []
with open("process_corpus.txt", encoding="utf-8") as fh:
    for i, line in enumerate(fh, start=1):
        parts = line.split()
        for w in parts[1:len(parts) - 1]:
            counts[w] = counts.get(w, 0) + 1
            total += 1
        if line in seen:
            repeats.append(i)
        seen.add(line)
problems = []
if total != index["total_words"]:
    problems.append("total %d != %d" % (total, index["total_words"]))
for entry in index["top_words"]:
    if counts.get(entry["word"]) != entry["count"]:
        problems.append("%s: %s != %d" % (entry["word"], counts.get(entry["word"]), entry["count"]))
ranked = sorted(counts, key=lambda w: -counts[w])[:len(index["top_words"])]
if sorted(ranked) != sorted(e["word"] for e in index["top_words"]):
    problems.append("top words differ: %s" % ranked)
if repeats != [d["line"] for d in index["duplicates"]]:
    problems.append("duplicates differ: %s" % repeats)
if problems:
    print("MISMATCH: " + "; ".join(problems))
    sys.exit(1)
print("verified: total %d, top %d words and %d duplicates agree" % (total, len(ranked), len(repeats)))
