"""Streaming indexer for process_corpus.txt.

Reads the corpus one line at a time (never the whole file), counts the words of every line
(all tokens except the leading [topic] tag and the trailing refNNNNN. token), the words and
lines per topic, and exact duplicate lines. Writes freq_index.json.
"""
import json
from collections import Counter

CORPUS = "process_corpus.txt"
TOP = 8


def build():
    counts = Counter()
    topics = {}
    first_seen = {}
    duplicates = []
    lines = 0
    with open(CORPUS, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            lines += 1
            tokens = line.split()
            tag, words = tokens[0], tokens[1:-1]
            counts.update(words)
            topic = tag.strip("[]")
            t = topics.setdefault(topic, {"lines": 0, "words": 0})
            t["lines"] += 1
            t["words"] += len(words)
            if line in first_seen:
                duplicates.append({"line": number, "first_occurrence": first_seen[line],
                                   "words": len(words), "ref": tokens[-1].rstrip(".")})
            else:
                first_seen[line] = number
    return counts, topics, duplicates, lines


def main():
    counts, topics, duplicates, lines = build()
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    total = sum(counts.values())
    index = {
        "source": CORPUS,
        "top_words": [{"word": w, "count": c} for w, c in top],
        "total_words": total,
        "distinct_words": len(counts),
        "lines": lines,
        "unique_lines": lines - len(duplicates),
        "topics": topics,
        "duplicates": duplicates,
        "total_words_without_duplicates": total - sum(d["words"] for d in duplicates),
    }
    with open("freq_index.json", "w") as fh:
        json.dump(index, fh, indent=2)
        fh.write("\n")
    print("lines %d, words %d, duplicates %d" % (lines, total, len(duplicates)))
    for w, c in top:
        print("%-12s %d" % (w, c))


if __name__ == "__main__":
    main()
