#!/usr/bin/env python3
"""Load driver for the HTTP ingress benchmark (issue 11): Alertmanager webhooks into a
relay, received by a phone-side slixmpp client.

    http_load.py run --label L -n N --concurrency C --url URL [--token T] \
        --host 127.0.0.1 --port P --ca-file PEM --receiver JID --receiver-password-file F \
        [--relay-pid PID] [--retry] [--idle-timeout S]
    http_load.py report RESULTS.jsonl

`run` logs the receiver in (a child process), then posts N Alertmanager webhooks (one
firing alert each, the body marker "bench TAG m<seq> <send-ns>" in its summary and
description) with C requests in flight, and waits until every accepted alert arrived or
nothing arrived for --idle-timeout s. With --retry, a request that fails (connection
refused or reset, any 5xx) is sent again every 0.2 s, as Alertmanager retries a
notification; a 2xx counts as accepted. It prints one JSON line: accepted, arrived,
lost (accepted, never arrived), duplicates, requests/s (accepted / time to the last
answer), throughput (arrived / first send → last arrival), p50/p99 of the request
(send → answer) and of the alert (send → arrival at the phone), and the relay's CPU.
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import cpu_seconds, make_client, now_ns, online, percentile  # noqa: E402

MARK = re.compile(r"bench (\S+) m(\d+) (\d+)")


def payload(tag, seq):
    marker = f"bench {tag} m{seq} {now_ns()}"
    # One alert group per webhook and phase: the bridge takes the same groupKey, status and
    # fingerprints again within its dedupe_window for an HA replica's copy (issue 24).
    name = f"Bench{tag}{seq}"
    return json.dumps({
        "version": "4", "status": "firing", "receiver": "xmpp", "groupKey": f"{{}}:{{alertname=\"{name}\"}}",
        "groupLabels": {"alertname": name}, "commonLabels": {"alertname": name, "severity": "page"},
        "commonAnnotations": {}, "externalURL": "http://alertmanager.example:9093", "truncatedAlerts": 0,
        "alerts": [{
            "status": "firing", "labels": {"alertname": name, "instance": "db1:9100", "severity": "page"},
            "annotations": {"summary": marker, "description": marker}, "startsAt": "2026-11-24T05:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus.example:9090/graph", "fingerprint": f"{abs(hash((tag, seq))):016x}",
        }],
    })


async def receive(args):
    arrivals = {}
    dups = [0]
    last = [time.monotonic()]
    client = make_client(args.receiver, args.receiver_password_file, args.ca_file)

    def on_message(msg):
        arrival = now_ns()
        match = MARK.search(msg["body"] or "")
        if not match or match.group(1) != args.tag:
            return
        seq = int(match.group(2))
        last[0] = time.monotonic()
        if seq in arrivals:
            dups[0] += 1
        else:
            arrivals[seq] = arrival

    client.add_event_handler("message", on_message)
    await online(client, args.host, args.port)
    print(json.dumps({"event": "online"}), flush=True)
    # Until stdin says how many were accepted (then until they arrived, or idle).
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    wanted = set(json.loads(line)["accepted"])
    while not wanted <= set(arrivals) and time.monotonic() - last[0] < args.idle_timeout:
        await asyncio.sleep(0.05)
    print(json.dumps({"event": "done", "arrivals": arrivals, "dups": dups[0]}), flush=True)
    client.disconnect()


async def send(args):
    import aiohttp

    tag = args.tag
    child = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "receive", "--tag", tag, "--host", args.host, "--port", str(args.port),
        "--ca-file", args.ca_file, "--receiver", args.receiver, "--receiver-password-file", args.receiver_password_file,
        "--idle-timeout", str(args.idle_timeout),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert json.loads(await child.stdout.readline())["event"] == "online"
    headers = {"Content-Type": "application/json"}
    if args.token:
        headers["Authorization"] = f"Bearer {args.token}"
    sent, answered, accepted, refused = {}, {}, [], [0]
    queue = asyncio.Queue()
    for seq in range(args.n):
        queue.put_nowait(seq)
    cpu_before = cpu_seconds(args.relay_pid) if args.relay_pid and not args.kill_after else None
    start = now_ns()

    async def worker(session):
        while not queue.empty():
            seq = queue.get_nowait()
            if args.rate:
                delay = start / 1e9 + seq / args.rate - now_ns() / 1e9
                if delay > 0:
                    await asyncio.sleep(delay)
            body = payload(tag, seq)
            sent[seq] = int(MARK.search(body).group(3))
            deadline = time.monotonic() + 120
            while True:
                try:
                    async with session.post(args.url, data=body, headers=headers) as response:
                        await response.read()
                        status = response.status
                except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
                    status = None
                if status is not None and 200 <= status < 300:
                    answered[seq] = now_ns()
                    accepted.append(seq)
                    if args.kill_after and len(accepted) == args.kill_after and args.relay_pid:
                        os.kill(args.relay_pid, 9)  # mid-load: the shell restarts it
                    break
                refused[0] += 1
                if not args.retry or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)

    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        await asyncio.gather(*(worker(session) for _ in range(args.concurrency)))
    last_answer = max(answered.values()) if answered else now_ns()
    cpu_after = cpu_seconds(args.relay_pid) if cpu_before is not None else None
    child.stdin.write((json.dumps({"accepted": accepted}) + "\n").encode())
    await child.stdin.drain()
    done = json.loads(await child.stdout.readline())
    await child.wait()
    arrivals = {int(k): v for k, v in done["arrivals"].items()}
    lost = [seq for seq in accepted if seq not in arrivals]
    request_ms = sorted((answered[s] - sent[s]) / 1e6 for s in answered)
    e2e_ms = sorted((arrivals[s] - sent[s]) / 1e6 for s in accepted if s in arrivals)
    last_arrival = max(arrivals.values()) if arrivals else start
    print(json.dumps({
        "label": args.label, "n": args.n, "accepted": len(accepted), "arrived": len(arrivals), "lost": len(lost),
        "duplicates": done["dups"], "refused_attempts": refused[0],
        "requests_per_s": len(accepted) / max(1e-9, (last_answer - start) / 1e9),
        "throughput": len(arrivals) / max(1e-9, (last_arrival - start) / 1e9),
        "request_p50_ms": percentile(request_ms, 50), "request_p99_ms": percentile(request_ms, 99),
        "alert_p50_ms": percentile(e2e_ms, 50), "alert_p99_ms": percentile(e2e_ms, 99),
        "relay_cpu_s": (cpu_after - cpu_before) if cpu_before is not None else None,
    }), flush=True)


def report(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print(f"{'run':<24} {'accepted':>9} {'arrived':>8} {'lost':>5} {'dup':>4} {'req/s':>8} {'alerts/s':>9} "
          f"{'req p50':>8} {'req p99':>8} {'alert p50':>9} {'alert p99':>9} {'CPU s':>6}")
    for r in rows:
        for key in ("request_p50_ms", "request_p99_ms", "alert_p50_ms", "alert_p99_ms"):
            r[key] = r[key] if r[key] is not None else float("nan")
        cpu = "-" if r["relay_cpu_s"] is None else f"{r['relay_cpu_s']:.2f}"
        print(f"{r['label']:<24} {r['accepted']:>5}/{r['n']:<3} {r['arrived']:>8} {r['lost']:>5} {r['duplicates']:>4} "
              f"{r['requests_per_s']:>8.1f} {r['throughput']:>9.1f} {r['request_p50_ms']:>8.2f} {r['request_p99_ms']:>8.2f} "
              f"{r['alert_p50_ms']:>9.2f} {r['alert_p99_ms']:>9.2f} {cpu:>6}")
    by = {r["label"]: r for r in rows}
    for load in ("load", "paced"):
        ours, theirs = by.get(f"bridge {load}"), by.get(f"pxa {load}")
        if ours and theirs and theirs["requests_per_s"] and theirs["alert_p99_ms"]:
            print(f"  {load}: requests/s bridge/pxa {ours['requests_per_s'] / theirs['requests_per_s']:.2f}x, "
                  f"alerts/s {ours['throughput'] / max(1e-9, theirs['throughput']):.2f}x, "
                  f"alert p99 {ours['alert_p99_ms']:.2f} vs {theirs['alert_p99_ms']:.2f} ms, "
                  f"relay CPU {ours['relay_cpu_s'] / max(1e-9, theirs['relay_cpu_s'] or 1e-9):.2f}x" if ours['relay_cpu_s'] is not None else "")
    ours, theirs = by.get("bridge kill -9"), by.get("pxa kill -9")
    if ours and theirs:
        print(f"  kill -9 mid-load: lost bridge {ours['lost']} of {ours['accepted']} accepted (dup {ours['duplicates']}), "
              f"pxa {theirs['lost']} of {theirs['accepted']} accepted (dup {theirs['duplicates']})")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "receive"):
        p = sub.add_parser(name)
        p.add_argument("--tag", default=uuid.uuid4().hex[:8])
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--ca-file", required=True)
        p.add_argument("--receiver", required=True)
        p.add_argument("--receiver-password-file", required=True)
        p.add_argument("--idle-timeout", type=float, default=15)
        if name == "run":
            p.add_argument("--label", required=True)
            p.add_argument("-n", type=int, default=500)
            p.add_argument("--concurrency", type=int, default=8)
            p.add_argument("--url", required=True)
            p.add_argument("--token")
            p.add_argument("--relay-pid", type=int)
            p.add_argument("--retry", action="store_true")
            p.add_argument("--rate", type=float, help="requests per second (default: as fast as C in flight allow)")
            p.add_argument("--kill-after", type=int, help="kill -9 --relay-pid once this many requests were accepted")
    p = sub.add_parser("report")
    p.add_argument("path")
    args = parser.parse_args()
    if args.command == "run":
        asyncio.run(send(args))
    elif args.command == "receive":
        asyncio.run(receive(args))
    else:
        report(args.path)


if __name__ == "__main__":
    main()
