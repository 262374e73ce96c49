"""Streaming word index for process_corpus.txt (first version).

Ranks the words and totals them, but does not record the per-word counts yet, and no report
has been written: the state of an agent interrupted halfway through the task.
"""
import json
from collections import Counter

counts = Counter()
lines = 0
with open("process_corpus.txt", encoding="utf-8") as fh:
    for line in fh:
        lines += 1
        counts.update(line.split()[1:-1])
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
with open("freq_index.json", "w") as fh:
    json.dump({"top_words": [w for w, _ in top], "total_words": sum(counts.values()),
               "lines": lines}, fh, indent=2)
    fh.write("\n")
