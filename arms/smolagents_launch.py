#!/usr/bin/env python3
"""Launcher of the smolagents arm, written for lrab.

It does what the `smolagent` command does with a prompt (one CodeAgent run over a LiteLLMModel,
no tools besides the final answer), plus the three things that command cannot set: the sampling
temperature, the context length, and which Python modules the agent's code may import. It reads
the task from a file so the prompt never passes through a shell. `--version` prints the
installed smolagents version, which `lrab arms check` compares with the pin.
"""

import argparse
import importlib.metadata
import sys


def main() -> int:
    p = argparse.ArgumentParser(prog="smolagents_launch.py")
    p.add_argument("--version", action="store_true", help="print the smolagents version")
    p.add_argument("--model-id", help="litellm model name, e.g. ollama_chat/qwen3:4b")
    p.add_argument("--api-base", help="server root, e.g. http://127.0.0.1:11434")
    p.add_argument("--num-ctx", type=int, help="context length sent as options.num_ctx")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-steps", type=int, default=20, help="smolagents' own default")
    p.add_argument("--imports", nargs="*", default=[], help="modules the agent's code may import")
    p.add_argument("--prompt-file", help="file holding the task")
    a = p.parse_args()
    if a.version:
        print("smolagents", importlib.metadata.version("smolagents"))
        return 0
    if not a.model_id or not a.prompt_file:
        p.error("--model-id and --prompt-file are required")
    with open(a.prompt_file, encoding="utf-8") as f:
        prompt = f.read()

    from smolagents import CodeAgent, LiteLLMModel

    kwargs = {"temperature": a.temperature}
    if a.num_ctx:
        kwargs["num_ctx"] = a.num_ctx
    model = LiteLLMModel(model_id=a.model_id, api_base=a.api_base, api_key="ollama", **kwargs)
    agent = CodeAgent(
        tools=[],
        model=model,
        max_steps=a.max_steps,
        additional_authorized_imports=a.imports,
    )
    result = agent.run(prompt)
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
