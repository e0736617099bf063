"""scim2-tester (PyPI) against a live svc SCIM endpoint.

Environment: SCIM_URL (the tenant's `/scim/v2` base) and SCIM_TOKEN (a `svcscim_` token).
Runs `check_server` with the tags discovery, crud (create, read, attributes, update, delete),
patch (add, remove, replace) and misc, for every resource type discovered (User and Group), prints one JSON line per result, then a summary line
`{"ok": …, "counts": {…}, "failures": […], "explained": […]}`: ok when every result is SUCCESS
or SKIPPED, or one of the EXPLAINED below.

EXPLAINED: results where scim2-tester's strict equality (`model_dump() ==`) meets a value the
server sets itself, which RFC 7643 allows. A person here has exactly one address, which the
server reports as `type: "work"`, `primary: true` (both `readOnly` in /Schemas); a PATCH
replacing `emails` with `{"value": …}` alone gets that address back with those two
sub-attributes, which the check compares with the nulls it sent.
"""

import json
import os
import sys

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

TAGS = {"discovery", "crud", "patch", "misc"}


def explained(title: str, reason: str) -> bool:
    """Whether a failed result is one of the EXPLAINED (see the module documentation)."""
    return (
        title == "check_replace_attribute"
        and "unexpected value for 'emails'" in reason
        and "type='work', primary=True)]" in reason.split("Returned value:")[-1]
    )


def main() -> int:
    client = SyncSCIMClient(
        Client(
            base_url=os.environ["SCIM_URL"],
            headers={"Authorization": f"Bearer {os.environ['SCIM_TOKEN']}"},
            timeout=30,
        )
    )
    client.discover()
    results = check_server(client, include_tags=TAGS)
    counts: dict[str, int] = {}
    failures = []
    explanations = []
    for result in results:
        status = result.status.name
        counts[status] = counts.get(status, 0) + 1
        line = {
            "status": status,
            "title": result.title,
            "reason": result.reason,
            "resource_type": getattr(result, "resource_type", None),
        }
        print(json.dumps(line, default=str))
        if result.status in (Status.SUCCESS, Status.SKIPPED):
            continue
        if explained(result.title, str(result.reason or "")):
            explanations.append(line)
        else:
            failures.append(line)
    ok = not failures and counts.get("SUCCESS", 0) > 0
    summary = {"ok": ok, "counts": counts, "failures": failures, "explained": explanations}
    print(json.dumps(summary, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
