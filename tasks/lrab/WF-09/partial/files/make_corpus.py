"""Generate a deterministic benchmark corpus for legacy_slow_code.py.

Writes corpus/call_000.txt .. call_NNN.txt (default 50 files x 200 lines).
The lines imitate support-call transcripts: a few greeting/closing lines that
repeat in every call (so de-duplication has real work to do), plus
utterances built from a fixed vocabulary plus ticket numbers, so the term
counts have a long tail.  Seeded, so every run writes byte-identical files.

Usage: python make_corpus.py [OUT_DIR] [FILES] [LINES]
"""

import os
import random
import sys

SEED = 9009

SPEAKERS = ["AGENT", "CALLER"]
OPENERS = [
    "AGENT: thank you for calling northwind support, how can I help you today",
    "CALLER: hi, I have a problem with my account",
    "AGENT: can I have your customer number please",
    "AGENT: let me pull that up for you",
]
CLOSERS = [
    "AGENT: is there anything else I can help you with",
    "CALLER: no, that's all, thanks",
    "AGENT: thank you for calling, have a nice day",
]
SUBJECTS = ["the invoice", "my router", "the mobile app", "the password reset",
            "my last payment", "the delivery", "the contract", "the modem",
            "the refund", "my email", "the firmware update", "the login page"]
VERBS = ["doesn't work", "was charged twice", "keeps restarting", "is missing",
         "shows an error", "was cancelled", "is very slow", "won't load",
         "was never received", "looks wrong", "expired", "got stuck"]
FILLERS = ["actually", "basically", "again", "yesterday", "this morning",
           "since monday", "after the update", "on my phone", "at home",
           "every time", "once more", "for a week"]
ACTIONS = ["I'll open ticket", "I've escalated ticket", "please quote ticket",
           "I've updated ticket", "I'm closing ticket", "we reopened ticket"]


def utterance(rng):
    """One variable line.

    A small pool of ticket numbers keeps many lines unique without blowing
    up the vocabulary (each number is a term of its own).
    """
    kind = rng.random()
    if kind < 0.45:
        return "CALLER: %s %s %s" % (rng.choice(SUBJECTS), rng.choice(VERBS),
                                     rng.choice(FILLERS))
    if kind < 0.80:
        return "AGENT: %s %d for %s" % (rng.choice(ACTIONS),
                                        rng.randint(1000, 1099),
                                        rng.choice(SUBJECTS))
    # Short back-channel lines repeat across calls.
    return "%s: %s" % (rng.choice(SPEAKERS),
                       rng.choice(["okay", "I see", "one moment please",
                                   "right", "sure", "can you repeat that"]))


def make_call(rng, lines):
    body_len = lines - len(OPENERS) - len(CLOSERS)
    body = [utterance(rng) for _ in range(body_len)]
    return OPENERS + body + CLOSERS


def main(argv):
    out = argv[1] if len(argv) > 1 else "corpus"
    files = int(argv[2]) if len(argv) > 2 else 50
    lines = int(argv[3]) if len(argv) > 3 else 200
    rng = random.Random(SEED)
    os.makedirs(out, exist_ok=True)
    for i in range(files):
        path = os.path.join(out, "call_%03d.txt" % i)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write("\n".join(make_call(rng, lines)) + "\n")
    print("wrote %d files x %d lines to %s/" % (files, lines, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
