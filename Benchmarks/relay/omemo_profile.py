"""A profiler attached to the bridge for one part of the OMEMO benchmark (omemo_bench.py),
when asked by the environment; see profile()."""
import asyncio
import os
import subprocess


async def profile(part, variant, pid):
    """A profiler attached to the bridge for `part` of `variant`, when asked:
    OMEMO_BENCH_PERF=FILE (`{variant}` in it is replaced), OMEMO_BENCH_PERF_PART (burst,
    the default, paced or replies), OMEMO_BENCH_PERF_VARIANT (required, the default, none or
    both), OMEMO_BENCH_PERF_MODE (record, the default: perf record -g; strace: syscall
    counts, strace -f -c; futex: where the futex calls (thread wake-ups) come from; dwarf:
    perf record with DWARF stacks, through C libraries built without frame pointers; stat:
    perf stat of OMEMO_BENCH_PERF_EVENTS, e.g. a uprobe made with perf probe)."""
    out = os.environ.get("OMEMO_BENCH_PERF")
    if not out or os.environ.get("OMEMO_BENCH_PERF_PART", "burst") != part or os.environ.get("OMEMO_BENCH_PERF_VARIANT", "required") not in (variant, "both"):
        return None
    out = out.replace("{variant}", variant)
    mode = os.environ.get("OMEMO_BENCH_PERF_MODE", "record")
    if mode == "strace":
        command = ["strace", "-f", "-c", "-p", str(pid), "-o", out]
    elif mode == "futex":
        command = ["perf", "record", "-e", "syscalls:sys_enter_futex", "-g", "-p", str(pid), "-o", out]
    elif mode == "stat":
        command = ["perf", "stat", "-e", os.environ.get("OMEMO_BENCH_PERF_EVENTS", "task-clock,context-switches"), "-p", str(pid), "-o", out]
    elif mode == "dwarf":
        command = ["perf", "record", "-F", "2999", "--call-graph", "dwarf,16384", "-p", str(pid), "-o", out]
    else:
        command = ["perf", "record", "-F", "4999", "-g", "-p", str(pid), "-o", out]
    profiler = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    await asyncio.sleep(1.0)
    return profiler
