"""Write dedup_report.md and corpus_summary.md from freq_index.json (numbers are never typed
by hand)."""
import json

index = json.load(open("freq_index.json"))
dups = index["duplicates"]
total = index["total_words"]
without = index["total_words_without_duplicates"]

r = ["# Duplicate report", ""]
r.append(
    "Method: build_index.py streams process_corpus.txt line by line and keeps a dictionary from "
    "the exact text of every line to the number of the line where it first appeared. A line "
    "whose full text, including its topic tag and its reference token, was already seen is an "
    "exact duplicate. Because every original note carries its own reference number, a repeated "
    "reference is the signature of a copied line rather than of two notes that happen to share "
    "words. A second pass in verify_index.py repeated the detection with a plain set and found "
    "the same lines."
)
r.append("")
r.append(
    "Result: the file has %d lines, of which %d are unique and %d are exact duplicates of "
    "earlier lines." % (index["lines"], index["unique_lines"], len(dups))
)
r.append("")
r.append("| duplicate line | first occurrence | reference | words |")
r.append("|---|---|---|---|")
for d in dups:
    r.append("| %d | %d | %s | %d |" % (d["line"], d["first_occurrence"], d["ref"], d["words"]))
r.append("")
r.append(
    "Effect on the counts: the duplicates contribute %d words. The total is %d words with "
    "duplicates and %d words after removing them. The counts in freq_index.json follow the "
    "task's rule and include the duplicate lines; removing the duplicates would lower each top "
    "word's count by the number of times it occurs in the duplicated lines. Recommendation: "
    "deduplicate the log at the source by "
    "rejecting a note whose reference number already exists."
    % (total - without, total, without)
)
with open("dedup_report.md", "w") as fh:
    fh.write("\n".join(r) + "\n")

s = ["# Corpus summary", ""]
s.append(
    "`process_corpus.txt`: %d lines, %d words in total (duplicates included), %d distinct "
    "words." % (index["lines"], total, index["distinct_words"])
)
s.append("")
s.append("Top words:")
s.append("")
for e in index["top_words"]:
    s.append("- %s: %d" % (e["word"], e["count"]))
s.append("")
s.append("## Topics")
s.append("")
s.append("| topic | lines | words |")
s.append("|---|---|---|")
for name in sorted(index["topics"]):
    t = index["topics"][name]
    s.append("| %s | %d | %d |" % (name, t["lines"], t["words"]))
s.append("")
s.append("## Duplicates")
s.append("")
s.append(
    "%d exact duplicate lines (line numbers %s); without them the corpus has %d words. See "
    "dedup_report.md." % (len(dups), ", ".join(str(d["line"]) for d in dups), without)
)
with open("corpus_summary.md", "w") as fh:
    fh.write("\n".join(s) + "\n")
print("dedup_report.md %d words" % len(open("dedup_report.md").read().split()))
