#!/usr/bin/env python3
"""Load driver for the relay benchmark (slixmpp).

    load.py run --label L --mode throughput|latency -n N [--rate R] --target JID \
        --host 127.0.0.1 --port P --ca-file PEM --sender JID --sender-password-file F \
        --receiver JID --receiver-password-file F [--relay-pid PID] [--server-pid PID] \
        [--sender-room ROOM] [--receiver-room ROOM]
    load.py report RESULTS.jsonl      # the table and the ratios, from the lines `run` printed

`run` logs the receiver in (a child process, so sending and receiving do not share one
Python interpreter), then the sender. It sends a warm-up (which also waits until the relay
is online), then N messages to --target (the receiver itself for a direct run, the relay's
account otherwise): as fast as possible (throughput) or paced at R msg/s (latency). Each
body carries a run tag, a sequence number and the send time (CLOCK_MONOTONIC, one host);
the receiver notes the arrival time. It prints one JSON line: received, duplicates,
out-of-order, duration (first send to last arrival), msg/s, latency percentiles, and the
CPU time of the relay process (and of Prosody) during the measured part, from
/proc/PID/stat (utime + stime, the process's own rusage).

Rooms (XEP-0045): with --sender-room the sender joins that room (nick: its localpart, no
history) and posts groupchat messages to it (--target defaults to the room); with
--receiver-room the receiver joins that room and counts only groupchat messages from its
occupants (not its own, not history), recognising bench messages by their body wherever
they sit in it ("sender: bench ..." after a relay). Messages posted before a relay has
joined are gone, so the warm-up repeats until the receiver has seen --warmup of them.
"""
import argparse
import asyncio
import json
import statistics
import math
import os
import re
import ssl
import sys
import time
import uuid
import xml.etree.ElementTree as ET

BODY = re.compile(r"bench (\S+) ([wm])(\d+) (\d+)$")
MUC = "http://jabber.org/protocol/muc"


def now_ns():
    return time.monotonic_ns()  # CLOCK_MONOTONIC: one clock for every process on the host


def make_client(jid, password_file, ca_file):
    import slixmpp

    with open(password_file) as f:
        password = f.read().rstrip("\n")
    client = slixmpp.ClientXMPP(jid, password)
    if ca_file:
        client.ssl_context = ssl.create_default_context(cafile=ca_file)
    client.enable_direct_tls = False
    client.enable_starttls = True
    client.enable_plaintext = False
    return client


async def online(client, host, port, timeout=30):
    ready = asyncio.get_running_loop().create_future()

    def started(_event):
        client.send_presence()
        if not ready.done():
            ready.set_result(True)

    def failed(*_):
        if not ready.done():
            ready.set_exception(RuntimeError(f"{client.boundjid.bare}: authentication failed"))

    client.add_event_handler("session_start", started)
    client.add_event_handler("failed_auth", failed)
    client.connect(host=host, port=port)
    await asyncio.wait_for(ready, timeout)


async def join_room(client, room, nick, timeout=30):
    """Joins ROOM as NICK without history; returns once the room sent our self-presence."""
    joined = asyncio.get_running_loop().create_future()

    def on_presence(presence):
        if presence["from"].bare != room or joined.done():
            return
        if presence["type"] == "error":
            joined.set_exception(RuntimeError(f"joining {room} as {nick}: {presence['error']['condition']}"))
        elif presence["from"].resource == nick and presence.xml.find(f"{{{MUC}#user}}x/{{{MUC}#user}}status[@code='110']") is not None:
            joined.set_result(True)

    client.add_event_handler("presence", on_presence)
    join = client.make_presence(pto=f"{room}/{nick}")
    x = ET.SubElement(join.xml, f"{{{MUC}}}x")
    ET.SubElement(x, f"{{{MUC}}}history", maxstanzas="0")
    join.send()
    try:
        await asyncio.wait_for(joined, timeout)
    finally:
        client.del_event_handler("presence", on_presence)


# ---------------------------------------------------------------- receiver (child process)

async def receive(args):
    out = sys.stdout
    warm, measured, seen = set(), [], set()
    last = {"arrival": now_ns(), "sent": None, "highest": -1, "out_of_order": 0, "dups": 0}
    finished = asyncio.get_running_loop().create_future()

    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    room = args.receiver_room
    nick = args.receiver.split("@", 1)[0]
    delay = "{urn:xmpp:delay}delay"

    def on_message(msg):
        arrival = now_ns()
        if room and (msg["type"] != "groupchat" or msg["from"].bare != room or msg["from"].resource == nick
                     or msg.xml.find(delay) is not None):
            return
        match = BODY.search(msg["body"] or "")
        if not match or match.group(1) != args.tag:
            return
        kind, seq, sent = match.group(2), int(match.group(3)), int(match.group(4))
        if kind == "w":
            warm.add(seq)
            if len(warm) == args.warmup:  # once, however many more the sender repeats
                emit({"event": "warm"})
            return
        last["arrival"] = arrival
        if seq in seen:
            last["dups"] += 1
            return
        seen.add(seq)
        if seq < last["highest"]:
            last["out_of_order"] += 1
        last["highest"] = max(last["highest"], seq)
        measured.append((seq, sent, arrival))
        if len(measured) == args.n and not finished.done():
            finished.set_result(True)

    client = make_client(args.receiver, args.receiver_password_file, args.ca_file)
    client.add_event_handler("message", on_message)
    await online(client, args.host, args.port)
    if room:
        await join_room(client, room, nick)
    emit({"event": "ready"})

    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def control():
        while line := await reader.readline():
            if line.strip() == b"sent":
                last["sent"] = now_ns()

    async def idle_watch():  # after the sender is done: stop when nothing came for `idle` s
        while not finished.done():
            await asyncio.sleep(0.1)
            if last["sent"] is not None:
                quiet = (now_ns() - max(last["arrival"], last["sent"])) / 1e9
                if quiet > args.idle and not finished.done():
                    finished.set_result(False)

    tasks = [asyncio.create_task(control()), asyncio.create_task(idle_watch())]
    await finished
    emit({"event": "done", "records": measured, "dups": last["dups"], "out_of_order": last["out_of_order"]})
    for task in tasks:
        task.cancel()
    client.disconnect(wait=0.5)
    await asyncio.sleep(0.2)


# ---------------------------------------------------------------- sender + orchestration

def cpu_seconds(pid):
    """utime + stime of the process (all its threads) from /proc/PID/stat, in seconds."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def schedstat(pid):
    """Summed over the process's threads from /proc/PID/task/*/schedstat: seconds on CPU
    (finer than the 10 ms ticks of /proc/PID/stat) and how many times a thread was put on
    a CPU (its wake-ups; a count, so no noise). Threads that exit between two readings are
    missed."""
    if not pid:
        return None, None
    total = 0
    slices = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None, None
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                fields = f.read().split()
            total += int(fields[0])
            slices += int(fields[2])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9, slices


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


async def run(args):
    tag = uuid.uuid4().hex[:10]
    child = await asyncio.create_subprocess_exec(
        sys.executable, os.path.abspath(__file__), "_receive", "--tag", tag, "-n", str(args.n),
        "--warmup", str(args.warmup), "--idle", str(args.idle), "--host", args.host, "--port", str(args.port),
        "--ca-file", args.ca_file or "", "--receiver", args.receiver,
        "--receiver-password-file", args.receiver_password_file, "--receiver-room", args.receiver_room or "",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,  # the final line lists every arrival
    )

    async def event(name, timeout):
        line = await asyncio.wait_for(child.stdout.readline(), timeout)
        if not line:
            raise RuntimeError(f"receiver exited before '{name}'")
        obj = json.loads(line)
        if obj["event"] != name:
            raise RuntimeError(f"receiver said {obj['event']}, expected {name}")
        return obj

    result = {"variant": args.variant, "label": args.label, "mode": args.mode, "n": args.n, "rate": args.rate if args.mode == "latency" else None}
    if args.sender_room or args.receiver_room:
        result["rooms"] = True
    sender = None
    try:
        await event("ready", 30)
        sender = make_client(args.sender, args.sender_password_file, args.ca_file)
        await online(sender, args.host, args.port)
        if args.sender_room:
            await join_room(sender, args.sender_room, args.sender.split("@", 1)[0])
        mtype = "groupchat" if args.sender_room else "chat"

        def send(kind, seq):
            sender.send_message(mto=args.target, mbody=f"bench {tag} {kind}{seq} {now_ns()}", mtype=mtype)

        # Warm-up: also waits until the relay is online (earlier messages wait offline). A
        # room keeps nothing for a relay that has not joined yet: repeat until received.
        if args.sender_room:
            warmed = asyncio.create_task(event("warm", args.ready_timeout))
            seq = 0
            while not warmed.done():
                send("w", seq)
                seq += 1
                await asyncio.wait([warmed], timeout=0.02)
            await warmed
        else:
            for seq in range(args.warmup):
                send("w", seq)
                await asyncio.sleep(0.02)
            await event("warm", args.ready_timeout)
        await asyncio.sleep(0.5)

        sched0, slices0 = schedstat(args.relay_pid)
        cpu0 = {"relay": cpu_seconds(args.relay_pid), "server": cpu_seconds(args.server_pid), "relay_sched": sched0}
        start = now_ns()
        if args.mode == "throughput":
            for seq in range(args.n):
                send("m", seq)
        else:
            interval = 1e9 / args.rate
            for seq in range(args.n):
                due = start + seq * interval
                delay = (due - now_ns()) / 1e9
                if delay > 0:
                    await asyncio.sleep(delay)
                send("m", seq)
        while not sender.waiting_queue.empty():  # handed to the socket
            await asyncio.sleep(0.001)
        sent_done = now_ns()
        child.stdin.write(b"sent\n")
        await child.stdin.drain()
        done = await event("done", args.timeout)
        await asyncio.sleep(0.3)  # let the relay finish its bookkeeping for the last message
        sched1, slices1 = schedstat(args.relay_pid)
        cpu1 = {"relay": cpu_seconds(args.relay_pid), "server": cpu_seconds(args.server_pid), "relay_sched": sched1}

        records = done["records"]
        if os.environ.get("RELAY_BENCH_DUMP"):
            # One line per message: sequence, send time and latency (ms), for looking at outliers.
            with open(os.environ["RELAY_BENCH_DUMP"], "a") as dump:
                for seq, sent, arrival in records:
                    dump.write(f"{args.label} {args.mode} {seq} {(sent - start) / 1e6:.1f} {(arrival - sent) / 1e6:.3f}\n")
        latencies = sorted((arrival - sent) / 1e6 for _, sent, arrival in records)
        last_arrival = max((arrival for _, _, arrival in records), default=start)
        duration = (last_arrival - start) / 1e9
        received = len(records)
        result.update({
            "received": received,
            "lost": args.n - received,
            "duplicates": done["dups"],
            "out_of_order": done["out_of_order"],
            "send_s": round((sent_done - start) / 1e9, 4),
            "duration_s": round(duration, 4),
            "msgs_per_s": round(received / duration, 1) if duration > 0 else None,
            "lat_p50_ms": percentile(latencies, 50),
            "lat_p90_ms": percentile(latencies, 90),
            "lat_p99_ms": percentile(latencies, 99),
            "lat_max_ms": latencies[-1] if latencies else None,
            "lat_mean_ms": sum(latencies) / len(latencies) if latencies else None,
        })
        for who in ("relay", "server", "relay_sched"):
            if cpu0[who] is not None and cpu1[who] is not None:
                used = cpu1[who] - cpu0[who]
                result[f"{who}_cpu_s"] = round(used, 3)
                result[f"{who}_cpu_us_per_msg"] = round(used / received * 1e6, 1) if received else None
        if slices0 is not None and slices1 is not None and received:
            result["relay_wakeups_per_msg"] = round((slices1 - slices0) / received, 2)
    except Exception as error:  # reported in the JSON line; run.sh carries on
        result["error"] = f"{type(error).__name__}: {error}"
    finally:
        if sender is not None:
            sender.disconnect(wait=0.5)
        if child.returncode is None:
            child.kill()
        await child.wait()
    for key in ("lat_p50_ms", "lat_p90_ms", "lat_p99_ms", "lat_max_ms", "lat_mean_ms"):
        if result.get(key) is not None:
            result[key] = round(result[key], 3)
    print(json.dumps(result), flush=True)
    return 0 if "error" not in result and result.get("lost") == 0 else 1


# ---------------------------------------------------------------- report

def report(path):
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    groups = {}
    for row in rows:
        groups.setdefault((row["variant"], row["label"], row["mode"]), []).append(row)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    labels = ["direct", "bridge", "bot", "bridge-memory", "bridge-ping", "bridge-noarchive"]
    rooms = any(r.get("rooms") for r in rows)  # rooms.sh: room to room, mod_muc_mam
    archive = "muc_mam" if rooms else "mod_mam"

    def pick(variant, label, mode):
        """The run with the median msg/s (failed runs rank lowest)."""
        runs = groups.get((variant, label, mode))
        if not runs:
            return None
        ranked = sorted(runs, key=lambda r: r.get("msgs_per_s") or 0)
        return ranked[(len(ranked) - 1) // 2]

    def get(variant, label, mode, key):
        row = pick(variant, label, mode)
        return None if row is None else row.get(key)

    def spread(variant, label):
        runs = groups.get((variant, label, "throughput"), [])
        rates = [r.get("msgs_per_s") or 0 for r in runs]
        return f"{min(rates):.0f}-{max(rates):.0f}" if len(rates) > 1 else ""

    def fmt(value, digits=1):
        if value is None:
            return "-"
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    def ratio(a, b):
        return a / b if a is not None and b else None

    def sub(a, b):
        return a - b if a is not None and b is not None else None

    print()
    head = (archive, "path", "recv/N", "msg/s", "(range)", "relay CPU", "relay", "server",
            "recv/N", "p50", "p99", "added", "added", "relay")
    head2 = ("", "", "tput", "tput", "", "s, tput", "µs/msg", "µs/msg", "paced", "ms", "ms", "p50 ms", "p99 ms", "µs/msg")
    widths = (8, 14, 10, 8, 10, 10, 8, 8, 10, 7, 7, 8, 8, 8)
    line = lambda cells: "".join(f"{c:<{w}}" if i < 2 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(head))
    print(line(head2))
    errors = []
    for variant in variants:
        for label in labels:
            t, lat = pick(variant, label, "throughput"), pick(variant, label, "latency")
            if t is None and lat is None:
                continue
            d50, d99 = get(variant, "direct", "latency", "lat_p50_ms"), get(variant, "direct", "latency", "lat_p99_ms")
            relay = label != "direct"
            print(line((
                variant, label,
                f"{t.get('received', '-')}/{t['n']}" if t else "-",
                fmt(t.get("msgs_per_s")) if t else "-",
                spread(variant, label),
                fmt(t.get("relay_cpu_s"), 2) if t and relay else "-",
                fmt(t.get("relay_cpu_us_per_msg")) if t and relay else "-",
                fmt(t.get("server_cpu_us_per_msg")) if t else "-",
                f"{lat.get('received', '-')}/{lat['n']}" if lat else "-",
                fmt(lat.get("lat_p50_ms"), 2) if lat else "-",
                fmt(lat.get("lat_p99_ms"), 2) if lat else "-",
                fmt(sub(lat.get("lat_p50_ms"), d50), 2) if lat and relay else "-",
                fmt(sub(lat.get("lat_p99_ms"), d99), 2) if lat and relay else "-",
                fmt(lat.get("relay_cpu_us_per_msg")) if lat and relay else "-",
            )))
            for row in groups.get((variant, label, "throughput"), []) + groups.get((variant, label, "latency"), []):
                if row.get("error") or row.get("lost") or row.get("duplicates") or row.get("out_of_order"):
                    errors.append(f"  {archive} {variant} {label} {row['mode']}: lost {row.get('lost')}, duplicates "
                                  f"{row.get('duplicates')}, out of order {row.get('out_of_order')}"
                                  + (f", error: {row['error']}" if row.get("error") else ""))
    print()
    print("tput: throughput runs (median of the repeats; range = slowest-fastest). CPU: the relay process's"
          " utime+stime (/proc/PID/stat) over the measured part, per relayed message. paced: the latency run;"
          " added = relay path minus the direct path (p50, p99).")
    if errors:
        print("Problems:")
        print("\n".join(errors))
    print()
    if rooms:
        print("Room to room (issue 10): direct = sender and receiver in one room; bridge and bot relay room a"
              " to room b. For reference, the 1:1 goals of issue 4: bridge/bot throughput >= 1.0, relay CPU"
              " per message <= 0.2, added latency p50 <= 0.5 ms, p99 <= 2 ms.")
    else:
        print("Goals (issue 4): bridge/bot throughput >= 1.0; bridge/bot relay CPU per message <= 0.2; "
              "added latency at the paced rate p50 <= 0.5 ms, p99 <= 2 ms; durable queue vs in-memory <= 10 % throughput.")
    for variant in variants:
        g = lambda label, mode, key: get(variant, label, mode, key)
        tb, tbot = g("bridge", "throughput", "msgs_per_s"), g("bot", "throughput", "msgs_per_s")
        td, tm = g("direct", "throughput", "msgs_per_s"), g("bridge-memory", "throughput", "msgs_per_s")
        cb, cbot = g("bridge", "throughput", "relay_cpu_us_per_msg"), g("bot", "throughput", "relay_cpu_us_per_msg")
        pb, pbot = g("bridge", "latency", "relay_cpu_us_per_msg"), g("bot", "latency", "relay_cpu_us_per_msg")
        d50, d99 = g("direct", "latency", "lat_p50_ms"), g("direct", "latency", "lat_p99_ms")
        b50, b99 = g("bridge", "latency", "lat_p50_ms"), g("bridge", "latency", "lat_p99_ms")
        o50, o99 = g("bot", "latency", "lat_p50_ms"), g("bot", "latency", "lat_p99_ms")
        m50, m99 = g("bridge-memory", "latency", "lat_p50_ms"), g("bridge-memory", "latency", "lat_p99_ms")
        cost = (1 - tb / tm) * 100 if tb and tm else None
        print(f"{archive} {variant}:")
        print(f"  throughput bridge/bot     {fmt(ratio(tb, tbot), 2)}x  (bridge {fmt(tb)}, bot {fmt(tbot)}, direct {fmt(td)} msg/s;"
              f" bridge/direct {fmt(ratio(tb, td), 2)}, bot/direct {fmt(ratio(tbot, td), 2)}; two-delivery ceiling 0.5)")
        print(f"  relay CPU/msg bridge/bot  {fmt(ratio(cb, cbot), 2)}x  throughput run ({fmt(cb)} vs {fmt(cbot)} µs);"
              f" paced run {fmt(ratio(pb, pbot), 2)}x ({fmt(pb)} vs {fmt(pbot)} µs)")
        wb, wbot = g("bridge", "latency", "relay_wakeups_per_msg"), g("bot", "latency", "relay_wakeups_per_msg")
        print(f"  relay wake-ups/msg, paced bridge {fmt(wb, 2)}, bot {fmt(wbot, 2)}  (times a relay thread was put on a CPU,"
              " /proc/PID/task/*/schedstat: a count, free of the machine's noise)")
        print(f"  added latency, bridge     p50 {fmt(sub(b50, d50), 2)} ms, p99 {fmt(sub(b99, d99), 2)} ms"
              f"  (bot: {fmt(sub(o50, d50), 2)} / {fmt(sub(o99, d99), 2)}; in-memory bridge: {fmt(sub(m50, d50), 2)} / {fmt(sub(m99, d99), 2)})")
        if not rooms or tm is not None:
            print(f"  durable queue cost        {fmt(cost, 1)} % throughput  (durable {fmt(tb)} vs in-memory {fmt(tm)} msg/s)")
        tn = g("bridge-noarchive", "throughput", "msgs_per_s")
        if tn is not None:
            # CPU per message from the threads' schedstat (nanoseconds), the median over every
            # throughput repeat: the 10 ms ticks of /proc/PID/stat are too coarse for a 10 % bar.
            def cpu(label, mode):
                values = [r.get("relay_sched_cpu_us_per_msg") for r in groups.get((variant, label, mode), [])]
                values = [v for v in values if v is not None]
                return statistics.median(values) if values else None
            ca, cn = cpu("bridge", "throughput"), cpu("bridge-noarchive", "throughput")
            pa, pn = cpu("bridge", "latency"), cpu("bridge-noarchive", "latency")
            print(f"  archive on/off (issue 25, goal <= 1.10x relay CPU/msg) {fmt(ratio(ca, cn), 2)}x tput ({fmt(ca)} vs {fmt(cn)} µs, median of"
                  f" {len(groups.get((variant, 'bridge', 'throughput'), []))} runs each), {fmt(ratio(pa, pn), 2)}x paced ({fmt(pa)} vs {fmt(pn)} µs);"
                  f" throughput {fmt(ratio(tb, tn), 2)}x ({fmt(tb)} vs {fmt(tn)} msg/s)")

        # Run k of one path beside run k of the other, in the order they ran: with
        # RELAY_BENCH_ONLY alternating the two paths and RELAY_BENCH_REPEAT=1 the two runs
        # of a pair are next to each other in time; the archive-pair path runs both at once.
        # A slow spell of the machine (a neighbour on the host) then weighs on both sides of
        # a ratio, not on one median.
        def paired(on_label, off_label, mode):
            on = [r.get("relay_sched_cpu_us_per_msg") for r in groups.get((variant, on_label, mode), [])]
            off = [r.get("relay_sched_cpu_us_per_msg") for r in groups.get((variant, off_label, mode), [])]
            ratios = sorted(a / b for a, b in zip(on, off) if a and b)
            if not ratios:
                return None
            return (f"{statistics.median(ratios):.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f}, {len(ratios)} pairs;"
                    f" median {statistics.median([v for v in on if v]):.1f} vs {statistics.median([v for v in off if v]):.1f} µs)")
        for on_label, off_label, what in (("bridge", "bridge-noarchive", "runs one after the other"), ("pair-archive", "pair-noarchive", "both at once")):
            t, p = paired(on_label, off_label, "throughput"), paired(on_label, off_label, "latency")
            if t or p:
                print(f"  archive on/off, pair by pair ({what}; goal <= 1.10x): tput {t or '-'}, paced {p or '-'}")
        tp, cp, pp = g("bridge-ping", "throughput", "msgs_per_s"), g("bridge-ping", "throughput", "relay_cpu_us_per_msg"), g("bridge-ping", "latency", "relay_cpu_us_per_msg")
        p50, p99 = g("bridge-ping", "latency", "lat_p50_ms"), g("bridge-ping", "latency", "lat_p99_ms")
        if tp is not None:
            print(f"  SM acks vs ping (issue 9) throughput {fmt(ratio(tb, tp), 2)}x ({fmt(tb)} vs {fmt(tp)} msg/s); CPU/msg"
                  f" {fmt(ratio(cb, cp), 2)}x tput ({fmt(cb)} vs {fmt(cp)} µs), {fmt(ratio(pb, pp), 2)}x paced ({fmt(pb)} vs {fmt(pp)} µs);"
                  f" added p50 {fmt(sub(b50, d50), 2)} vs {fmt(sub(p50, d50), 2)} ms, p99 {fmt(sub(b99, d99), 2)} vs {fmt(sub(p99, d99), 2)} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--label", default="run", help="direct, bridge, bot, bridge-memory, bridge-ping or bridge-noarchive (for the report)")
    r.add_argument("--variant", default="-", help="e.g. off/on for mod_mam (for the report)")
    r.add_argument("--mode", choices=["throughput", "latency"], default="throughput")
    r.add_argument("-n", type=int, default=2000)
    r.add_argument("--rate", type=float, default=100)
    r.add_argument("--target", help="JID the sender writes to (default: --sender-room)")
    r.add_argument("--sender-room", help="room the sender joins and posts groupchat messages to")
    r.add_argument("--sender", required=True)
    r.add_argument("--sender-password-file", required=True)
    r.add_argument("--relay-pid", type=int)
    r.add_argument("--server-pid", type=int)
    r.add_argument("--ready-timeout", type=float, default=60, help="seconds to wait for the warm-up to arrive")
    r.add_argument("--timeout", type=float, default=600, help="seconds to wait for the measured messages")
    for p in (r, rc := sub.add_parser("_receive")):
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("--port", type=int, default=5222)
        p.add_argument("--ca-file")
        p.add_argument("--receiver", required=True)
        p.add_argument("--receiver-password-file", required=True)
        p.add_argument("--receiver-room", help="room the receiver joins and listens in")
        p.add_argument("--warmup", type=int, default=50)
        p.add_argument("--idle", type=float, default=10, help="stop this long after the last arrival once all is sent")
    rc.add_argument("--tag", required=True)
    rc.add_argument("-n", type=int, required=True)
    rp = sub.add_parser("report")
    rp.add_argument("results")
    args = parser.parse_args()
    if args.command == "report":
        report(args.results)
        return 0
    if getattr(args, "ca_file", None) == "":
        args.ca_file = None
    if getattr(args, "receiver_room", None) == "":
        args.receiver_room = None
    if args.command == "run":
        args.target = args.target or args.sender_room
        if not args.target:
            parser.error("run: --target or --sender-room is required")
    return asyncio.run(run(args) if args.command == "run" else receive(args)) or 0


if __name__ == "__main__":
    sys.exit(main())
