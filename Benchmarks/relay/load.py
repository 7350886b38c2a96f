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
import math
import os
import re
import ssl
import sys
import time
import uuid
import xml.etree.ElementTree as ET

from load_report import report

BODY = re.compile(r"bench (\S+) ([wm])(\d+) (\d+)$")
MUC = "http://jabber.org/protocol/muc"


def now_ns():
    return time.monotonic_ns()  # CLOCK_MONOTONIC: one clock for every process on the host


# What a relayed copy may carry besides its body (issue 43: what each costs the server),
# for --elements: the relay marker, origin-id (XEP-0359), a receipt request (XEP-0184),
# markable (XEP-0333) and a store hint (XEP-0334).
# Attributes None: the message's own id (slixmpp gives every message one), as our copies do.
ELEMENTS = {
    "R": ("urn:xmpp-bridge:relay:0", "relay", {"by": "xmpp-bridge"}),
    "O": ("urn:xmpp:sid:0", "origin-id", None),
    "Q": ("urn:xmpp:receipts", "request", {}),
    "M": ("urn:xmpp:chat-markers:0", "markable", {}),
    "S": ("urn:xmpp:hints", "store", {}),
}


def make_client(jid, password_file, ca_file, stream_management=False):
    import slixmpp

    with open(password_file) as f:
        password = f.read().rstrip("\n")
    client = slixmpp.ClientXMPP(jid, password)
    if ca_file:
        client.ssl_context = ssl.create_default_context(cafile=ca_file)
    client.enable_direct_tls = False
    client.enable_starttls = True
    client.enable_plaintext = False
    if stream_management:
        client.register_plugin("xep_0198")  # the server then keeps a resend queue for it
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

    client = make_client(args.receiver, args.receiver_password_file, args.ca_file, stream_management=args.receiver_sm)
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


def io_calls(pid):
    """The process's read and write system calls so far (/proc/PID/io syscr, syscw), or None."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/io") as f:
            fields = dict(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)
        return int(fields["syscr"]), int(fields["syscw"])
    except (OSError, KeyError, ValueError):
        return None


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
        *(["--receiver-sm"] if args.receiver_sm else []),
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
            message = sender.make_message(mto=args.target, mbody=f"bench {tag} {kind}{seq} {now_ns()}", mtype=mtype)
            for letter in args.elements:
                namespace, name, attributes = ELEMENTS[letter]
                element = ET.Element(f"{{{namespace}}}{name}", attributes if attributes is not None else {"id": message["id"]})
                message.xml.append(element)
            message.send()

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
        io0 = io_calls(args.server_pid)
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
        io1 = io_calls(args.server_pid)

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
        if io0 is not None and io1 is not None and received:
            # The server's reads and writes per message: how many times our stanzas (and
            # acknowledgements) made it read a socket or write one, free of the machine's noise.
            result["server_reads_per_msg"] = round((io1[0] - io0[0]) / received, 2)
            result["server_writes_per_msg"] = round((io1[1] - io0[1]) / received, 2)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--label", default="run", help="direct, bridge, bot, bridge-memory, bridge-ping, bridge-noarchive, pair-archive or pair-noarchive (for the report)")
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
    r.add_argument("--elements", default="", help="letters of ELEMENTS the sender adds to each message (R, O, Q, M, S)")
    for p in (r, rc := sub.add_parser("_receive")):
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("--port", type=int, default=5222)
        p.add_argument("--ca-file")
        p.add_argument("--receiver", required=True)
        p.add_argument("--receiver-password-file", required=True)
        p.add_argument("--receiver-room", help="room the receiver joins and listens in")
        p.add_argument("--warmup", type=int, default=50)
        p.add_argument("--idle", type=float, default=10, help="stop this long after the last arrival once all is sent")
        p.add_argument("--receiver-sm", action="store_true", help="the receiver enables stream management (XEP-0198)")
    rc.add_argument("--tag", required=True)
    rc.add_argument("-n", type=int, required=True)
    rp = sub.add_parser("report")
    rp.add_argument("results")
    args = parser.parse_args()
    if getattr(args, "elements", "") and set(args.elements) - set(ELEMENTS):
        parser.error(f"--elements: letters of {''.join(ELEMENTS)}, not {args.elements}")
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
