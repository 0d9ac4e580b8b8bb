"""The observability module's alarms."""

from __future__ import annotations

import fnmatch
import os
import re

from .common import Checks
from .terraform import HclError, blocks, first, hcl_keys, hcl_subst, locals_of


def check_alarms(root: str, checks: Checks, modules: dict) -> None:
    """The observability module's alarms are the ones its README's table names (every row's
    alarm exists, every alarm has a row; `<…>` stands for any key), each notifies
    var.alarm_actions when it fires and when it recovers, and every `moved` block leaves an
    address no longer declared for an instance the module makes."""
    problems = []
    obs_dir = "terraform/modules/observability"
    obs = modules.get(obs_dir, {})
    local = locals_of(obs)
    alarms = blocks(obs, "resource", "aws_cloudwatch_metric_alarm")
    instances: dict[str, list[str] | None] = {}
    names: dict[str, str] = {}
    for name, body in alarms.items():
        where = f"{obs_dir} aws_cloudwatch_metric_alarm.{name}"
        for arg in ("alarm_actions", "ok_actions"):
            if first(body.get(arg)) != "${var.alarm_actions}":
                problems.append(f"{where}: {arg} is {first(body.get(arg))!r}, want var.alarm_actions")
        template = str(first(body.get("alarm_name"))).replace("${var.name}", "<name>")
        keys = hcl_keys(first(body["for_each"]), local) if "for_each" in body else [None]
        instances[name] = keys if "for_each" in body else None
        for key in keys if keys is not None else ["*"]:
            try:
                alarm = hcl_subst(template, {"each": {"key": key, "value": None}}) if key is not None else template
            except HclError as e:
                problems.append(f"{where}: {e}")
                continue
            if "${" in alarm:
                problems.append(f"{where}: alarm_name {template!r} does not read as a name")
            names[alarm] = where

    # The README's table: `<name>-…` names in its first column.
    with open(os.path.join(root, obs_dir, "README.md"), encoding="utf-8") as fh:
        rows = [line.split("|")[1] for line in fh if line.startswith("| `")]
    documented = [n for row in rows for n in re.findall(r"`(<name>-[^`]+)`", row)]

    def pattern(n: str) -> str:
        return "<name>" + re.sub(r"<[^>]+>", "*", n[len("<name>"):])

    for alarm, where in sorted(names.items()):
        if not any(fnmatch.fnmatchcase(alarm, pattern(d)) or pattern(alarm) == pattern(d) for d in documented):
            problems.append(f"{where}: alarm {alarm} has no row in {obs_dir}/README.md")
    for d in documented:
        if not any(fnmatch.fnmatchcase(a, pattern(d)) or pattern(a) == pattern(d) for a in names):
            problems.append(f"{obs_dir}/README.md names {d}, which the module does not make")

    # moved blocks: from an address gone, to one the module makes.
    address = re.compile(r'^\$\{(\w+)\.(\w+)(?:\[(?:"([^"]*)"|(\d+))\])?\}$')
    for block in obs.get("moved", []):
        frm, to = (address.match(str(first(block.get(k)))) for k in ("from", "to"))
        if not frm or not to:
            problems.append(f"{obs_dir} moved {first(block.get('from'))} → {first(block.get('to'))}: not resource addresses")
            continue
        if blocks(obs, "resource", frm.group(1)).get(frm.group(2)) is not None:
            problems.append(f"{obs_dir} moved from {frm.group(1)}.{frm.group(2)}, which is still declared")
        target = blocks(obs, "resource", to.group(1)).get(to.group(2))
        keys = instances.get(to.group(2)) if to.group(1) == "aws_cloudwatch_metric_alarm" else None
        if target is None:
            problems.append(f"{obs_dir} moved to {to.group(1)}.{to.group(2)}, which is not declared")
        elif to.group(3) is not None and ("for_each" not in target or (keys is not None and to.group(3) not in keys)):
            problems.append(f"{obs_dir} moved to {to.group(1)}.{to.group(2)}[{to.group(3)!r}], a key its for_each does not make ({keys})")
    checks.check(f"alarms of {obs_dir} = its README's table ({len(names)} names), each notifies var.alarm_actions, moved blocks land on made instances", problems)
