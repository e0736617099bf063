"""The statuses each operation answered in a schemathesis run, from its NDJSON report(s).

Usage: python statuses.py REPORT.ndjson...
Prints one JSON object: {"METHOD /path/{param}": {"200": 3, "404": 1}, ...}, for every request
schemathesis sent (its probes of undocumented methods included; the caller filters).
Run by crates/runtime/tests/it/openapi.rs with interop/api/.venv's Python.
"""

import collections
import json
import sys


def main(paths):
    table = collections.defaultdict(collections.Counter)
    for path in paths:
        with open(path, encoding="utf-8") as report:
            for line in report:
                event = json.loads(line).get("ScenarioFinished")
                if not event:
                    continue
                recorder = event.get("recorder") or {}
                cases = recorder.get("cases") or {}
                for case_id, interaction in (recorder.get("interactions") or {}).items():
                    case = (cases.get(case_id) or {}).get("value") or {}
                    response = interaction.get("response") or {}
                    if "method" in case and "path" in case and "status_code" in response:
                        label = f"{case['method'].upper()} {case['path']}"
                        table[label][str(response["status_code"])] += 1
    json.dump({label: dict(sorted(counts.items())) for label, counts in sorted(table.items())}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
