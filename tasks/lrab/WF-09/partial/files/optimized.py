"""Work in progress: only dedupe_lines is optimized so far."""

from legacy_slow_code import load_transcripts, term_frequency, top_terms  # noqa: F401


def dedupe_lines(transcripts):
    seen = set()
    kept = []
    for _name, text in transcripts:
        for line in text.split("\n"):
            line = line.strip()
            if line and line not in seen:
                seen.add(line)
                kept.append(line)
    return kept
