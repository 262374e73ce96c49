#!/usr/bin/env python3
"""Write a synthetic cells.csv (our format) with about N rows for the large-input benchmark:
8 arms x 10 models x 18 tasks x repeats, simulated backend, some superseded attempts.
Usage: python3 gen_synthetic.py OUT.csv [N=100000]. Deterministic (seeded)."""
import random
import sys

HEADER = ("run_id,arm,model,task,tier,repeat,attempt,score,milestone_score,final_score,wall_seconds,"
          "exit_code,failure_mode,backend,simulated,prompt_tokens,completion_tokens,model_calls,tool_calls,attempt_dir")


def main(out, n):
    rng = random.Random(7)
    arms = ["harness", "opencode", "goose", "agent-mini", "harness-no-finish-gate", "arm5", "arm6", "arm7"]
    models = [f"sim-{s}b" for s in (1, 2, 3, 4, 7, 8, 12, 14, 32, 35)]
    tasks = [(f"WF-{i:02d}", 1 if i <= 2 else 2 if i <= 6 else 3) for i in range(1, 16)] + [(f"LH-{i:02d}", 4) for i in range(1, 4)]
    per_rep = len(arms) * len(models) * len(tasks)
    reps = max(1, -(-n // per_rep))
    rows = 0
    with open(out, "w") as f:
        f.write(HEADER + "\n")
        for rep in range(reps):
            for a_i, arm in enumerate(arms):
                for m_i, model in enumerate(models):
                    for task, tier in tasks:
                        p = min(0.95, 0.2 + 0.07 * m_i + 0.05 * (len(arms) - a_i) / 2)
                        score = round(min(1.0, max(0.0, rng.gauss(p, 0.2))), 3)
                        mode = "completed" if score >= 0.3 else rng.choice(["early_finish", "stall", "error"])
                        f.write(f"run{rep % 3},{arm},{model},{task},{tier},{rep},0,{score},,,{rng.uniform(30, 900):.1f},0,"
                                f"{mode},sim,true,{rng.randint(1000, 90000)},{rng.randint(100, 9000)},{rng.randint(3, 60)},"
                                f"{rng.randint(1, 80)},a{rep}\n")
                        rows += 1
    print(f"wrote {rows} rows to {out}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
