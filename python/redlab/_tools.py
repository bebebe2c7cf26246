"""The command line's tools from Python: the device list, the analyzer's JSON report
and benchmark records, run in this process by the same code as ``redlab``."""

import json
import os
import tempfile

from . import _native


class CommandError(RuntimeError):
    """A redlab command that failed; ``code`` is its exit code (1: a result did not
    verify, 2: bad usage or input)."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def _run(args):
    code, printed, message = _native.run_command([str(a) for a in args])
    if code != 0:
        raise CommandError(message or f"exit code {code}", code)
    return printed


def _flags(options):
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            for item in value:
                args += [flag, str(item)]
        else:
            args += [flag, str(value)]
    return args


def devices():
    """The devices here and, for each backend that cannot run, why: a dict with
    ``devices``, ``unavailable`` and ``nccl`` (the NCCL version, or None)."""
    return json.loads(_native.devices_json())


def analyze(target, **options):
    """Runs ``redlab analyze TARGET`` (a variant name, an OpenCL C file or a .clamsee
    session) in the SIMT simulator and returns its JSON report as a dict. Options are
    the command's flags: ``analyze("reduce1", global_size=1024, local=128)`` passes
    ``--global-size 1024 --local 128``; list values repeat a flag."""
    printed = _run(["analyze", target, "--json", *_flags(options)])
    return json.loads(printed)


def bench(**options):
    """Runs ``redlab bench`` with the given flags (``sizes="2^16,2^20"``,
    ``ops="sum,max"``, ``device="cpu"`` …) and returns its records, one dict per row."""
    if "json" in options:
        raise ValueError("bench() returns the records; do not pass json=")
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "records.jsonl")
        _run(["bench", *_flags(options), "--json", path])
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
