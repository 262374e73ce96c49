"""Run the whole suite and write integration_report.md from its real output."""
import subprocess
import sys

run = subprocess.run([sys.executable, "test_suite.py"], capture_output=True, text=True, timeout=120)
output = (run.stdout + run.stderr).strip()
lines = output.splitlines()
summary = lines[-1] if lines else "(no output)"
passes = [l.split()[1] for l in lines if l.startswith("PASS ")]
fails = [l.split()[1].rstrip(":") for l in lines if l.startswith("FAIL ")]

report = ["# Integration report", ""]
report.append("## All tests")
report.append("")
report.append("Final run of `python test_suite.py` over the ten fixed modules (exit code %d):"
              % run.returncode)
report.append("")
report.append("```")
report.extend(lines)
report.append("```")
report.append("")
report.append("Summary line: `%s`." % summary)
report.append("")
report.append("## Regression")
report.append("")
if fails:
    report.append("Still failing: %s. These must be fixed before release." % ", ".join(fails))
else:
    report.append(
        "Every case that passed after its own fix still passes in the final run (%d of %d: %s), "
        "so no later fix broke an earlier module. The test file was not modified."
        % (len(passes), len(passes) + len(fails), ", ".join(passes))
    )
with open("integration_report.md", "w") as fh:
    fh.write("\n".join(report) + "\n")
with open("final_test_run.txt", "w") as fh:
    fh.write(output + "\n")
print(summary)
