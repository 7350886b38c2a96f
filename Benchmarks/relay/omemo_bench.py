#!/usr/bin/env python3
"""OMEMO benchmark driver (issue 41, "Measure"): FIFO -> account -> phone, and the phone's
replies back, with `encryption = "required"` (the account an OMEMO device) against `"none"`
(the account without OMEMO, the phone writing plaintext), alternated in one run.

This process is the phone: slixmpp with slixmpp-omemo (Tests/Peers/omemo_phone.py's
client), logged in as bob. For each variant it writes bridge.toml, starts the bridge,
and measures:
  burst   N lines written to the FIFO at once, until the phone has all of them
  paced   P lines at R msg/s
  replies M messages from the phone (encrypted under "required") to the account, sent
          while the bridge is stopped; from its SIGCONT until the socket local's
          subscriber has all of them
Relay CPU is the bridge's own utime + stime (/proc/PID/stat) over each part. Then, in an
extra burst with `strace -c` attached, the durable writes (fsync + fdatasync) per message.
Each part counts lost, twice and (at the phone) failed decryptions.

usage: omemo_bench.py --bridge BIN --dir DIR --port PORT --ca-file PEM [--runs K] ...
prints one JSON line per part and run.
"""
import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "Tests" / "Peers"))
import omemo_phone  # noqa: E402  (the phone's client and OMEMO plugin)
from omemo_profile import profile  # noqa: E402  (a profiler on one part, when asked)

omemo_phone.emit = lambda **_: None  # its event lines are the tests'; this driver prints its own
import slixmpp  # noqa: E402
from slixmpp.jid import JID  # noqa: E402


def cpu_seconds(pid):
    """The bridge's CPU time: its threads' run time from schedstat (nanoseconds; /proc's
    utime and stime count in 10 ms ticks, too coarse for a burst of 500)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass
    return total / 1e9


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def delivered(port):
    """Deliveries the server took for the account (xmpp_bridge_messages_relayed_total)."""
    import urllib.request
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except OSError:
        return None
    total = 0
    for line in text.splitlines():
        if line.startswith("xmpp_bridge_messages_relayed_total") and 'transport="home"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


class Phone(omemo_phone.Phone):
    """The phone, keeping what arrives by body with its arrival time."""

    def __init__(self, jid, password):
        super().__init__(jid, password)
        self.arrived = {}
        self.counts = {}
        self.failed = 0
        # While a burst or the paced part is measured, stanzas are kept and opened after
        # it: a phone in Python decrypts a message in about 1.5 ms, and one busy decrypting
        # stops reading its socket, which would make its server, not the bridge, the measure.
        self.deferred = None

    async def drain(self):
        """Opens what was kept during a burst, in order; arrival times are the stanzas'."""
        kept, self.deferred = self.deferred or [], None
        for stanza, at in kept:
            await self.take(stanza, at)

    async def on_message(self, stanza):
        if self.deferred is not None:
            self.deferred.append((stanza, time.monotonic()))
            return
        try:
            await self.take(stanza, time.monotonic())
        except Exception as error:  # a broken message must not end the run; it is counted
            print(f"omemo_bench: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            self.failed += 1

    async def take(self, stanza, at):
        try:
            await self.open(stanza, at)
        except Exception as error:
            print(f"omemo_bench: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            self.failed += 1

    async def open(self, stanza, at):
        if stanza["type"] not in ("chat", "normal"):
            return
        omemo = self.plugin["xep_0384"]
        body = None
        if not omemo.is_encrypted(stanza):
            body = stanza["body"]
        else:
            try:
                message, _ = await omemo.decrypt_message(stanza)
                body = message["body"]
            except Exception:
                self.failed += 1
                return
        if not body:
            return
        text = body.rsplit(": ", 1)[-1]
        self.counts[text] = self.counts.get(text, 0) + 1
        self.arrived.setdefault(text, at)


async def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.01)
    return predicate()


async def prepare(self, body, to, encrypted):
    """A message to `to`, encrypted when asked, ready to send."""
    message = self.make_message(mto=JID(to), mtype="chat")
    message["body"] = body
    if not encrypted:
        return message
    message.set_from(self.boundjid)
    sealed, _ = await self.plugin["xep_0384"].encrypt_message(message, {JID(to)})
    sealed["eme"]["namespace"] = "eu.siacs.conversations.axolotl"
    sealed["eme"]["name"] = "OMEMO"
    return sealed


Phone.prepare = prepare


class Sink:
    """A subscriber of the socket local: the replies as they come out of the bridge."""

    def __init__(self):
        self.arrived = {}
        self.counts = {}

    async def start(self, path):
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(b'{"subscribe":["phone"]}\n')
        await writer.drain()
        await reader.readline()
        self.task = asyncio.create_task(self.read(reader))
        self.writer = writer

    async def read(self, reader):
        while line := await reader.readline():
            try:
                body = json.loads(line).get("body", "")
            except ValueError:
                continue
            text = body.rsplit(": ", 1)[-1]
            self.counts[text] = self.counts.get(text, 0) + 1
            self.arrived.setdefault(text, time.monotonic())

    def stop(self):
        self.task.cancel()
        self.writer.close()


def write_config(path, args, variant, metrics):
    omemo = variant == "required"
    path.write_text(f"""[bridge]
state = "{args.dir}/{variant}.sqlite"
control_socket = "{args.dir}/{variant}.control"
metrics_listen = "127.0.0.1:{metrics}"

[accounts.home]
jid = "home@example.test"
password_file = "{args.dir}/home.password"
host = "127.0.0.1"
port = {args.port}
ca_file = "{args.ca_file}"
omemo = {"true" if omemo else "false"}

[local.alerts]
kind = "fifo"
path = "{args.dir}/alerts.fifo"

[local.sink]
kind = "socket"
path = "{args.dir}/sink.sock"

[channels.phone]
members = [
  {{ account = "home", jid = "bob@example.test"{', encryption = "required"' if omemo else ''} }},
  {{ local = "alerts" }},
  {{ local = "sink", direction = "out" }},
]
""")


async def fifo_write(path, lines, rate=None):
    def write_all():
        with open(path, "w") as fifo:
            if rate is None:
                fifo.write("".join(f"{line}\n" for line in lines))
                return
            start = time.monotonic()
            for index, line in enumerate(lines):
                due = start + index / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                fifo.write(f"{line}\n")
                fifo.flush()
    await asyncio.get_running_loop().run_in_executor(None, write_all)


async def one_variant(args, phone, variant, run):
    config = Path(args.dir) / f"{variant}.toml"
    metrics = free_port()
    write_config(config, args, variant, metrics)
    log = open(Path(args.dir) / f"bridge-{variant}-{run}.log", "w")
    bridge = subprocess.Popen([args.bridge, "run", "--config", str(config), "--log-level", os.environ.get("OMEMO_BENCH_LOG_LEVEL", "info")], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    results = []
    try:
        logfile = Path(args.dir) / f"bridge-{variant}-{run}.log"
        ok = await wait_for(lambda: "] online" in logfile.read_text() and os.path.exists(f"{args.dir}/sink.sock") and os.path.exists(f"{args.dir}/alerts.fifo"), 60)
        if not ok:
            raise RuntimeError(f"bridge did not come online: {logfile.read_text()[-2000:]}")
        sink = Sink()
        await sink.start(f"{args.dir}/sink.sock")
        fifo = f"{args.dir}/alerts.fifo"
        # Warm-up: the session (and its key exchange) before anything is measured.
        warm = f"{variant}-{run}-warm"
        await fifo_write(fifo, [warm])
        if not await wait_for(lambda: warm in phone.arrived, 60):
            raise RuntimeError(f"warm-up did not arrive: {logfile.read_text()[-2000:]}")
        await phone.send_text(f"{variant}-{run}-warmreply", "home@example.test", None, variant == "required")
        await wait_for(lambda: f"{variant}-{run}-warmreply" in sink.arrived, 60)
        failed_before = phone.failed

        async def until_delivered(count):
            """When the server has taken `count` more deliveries than now, by the metrics."""
            target = (delivered(metrics) or 0) + count
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                now = delivered(metrics)
                if now is not None and now >= target:
                    return time.monotonic()
                await asyncio.sleep(0.02)
            return None

        def result(part, lines, seconds, cpu, arrived, counts):
            received = [line for line in lines if line in arrived]
            return {
                "variant": variant, "run": run, "part": part, "n": len(lines), "lost": len(lines) - len(received),
                "twice": sum(max(0, counts.get(line, 0) - 1) for line in lines),
                "seconds": seconds, "cpu_ms_per_msg": 1000 * cpu / len(lines), "throughput": len(lines) / max(seconds, 1e-9) if seconds else 0.0,
            }

        # Burst: until the server took every message (the bridge's throughput; the phone's
        # own decryption, in Python, is not in it), then until the phone read them all.
        lines = [f"{variant}-{run}-b{i}" for i in range(args.n)]
        base = delivered(metrics) or 0
        server0 = cpu_seconds(args.server_pid) if args.server_pid else 0
        phone0 = cpu_seconds(os.getpid())
        phone.deferred = []
        profiler = await profile("burst", variant, bridge.pid)
        cpu0, start = cpu_seconds(bridge.pid), time.monotonic()
        writing = asyncio.create_task(fifo_write(fifo, lines))
        done = None
        deadline = start + args.timeout
        while time.monotonic() < deadline:
            count = delivered(metrics)
            if count is not None and count >= base + len(lines):  # taken by the phone's server
                done = time.monotonic()
                break
            await asyncio.sleep(0.02)
        await writing
        cpu = cpu_seconds(bridge.pid) - cpu0
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(30)
        others = {"server_cpu_ms_per_msg": 1000 * (cpu_seconds(args.server_pid) - server0) / len(lines) if args.server_pid else None,
                  "phone_cpu_ms_per_msg": 1000 * (cpu_seconds(os.getpid()) - phone0) / len(lines)}
        await wait_for(lambda: len(phone.deferred or []) >= len(lines), args.timeout)
        await phone.drain()
        await wait_for(lambda: all(line in phone.arrived for line in lines), args.timeout)
        burst = result("burst", lines, (done - start) if done else None, cpu, phone.arrived, phone.counts)
        burst.update(others)
        results.append(burst)

        # Paced: P lines at R msg/s; CPU per message, and how long after the last write the
        # last was taken by the server.
        lines = [f"{variant}-{run}-p{i}" for i in range(args.paced)]
        base = delivered(metrics) or 0
        # The phone keeps what arrives here too, opened after: its decryption in Python
        # would otherwise hold up this loop, and so the moment the last is seen taken.
        phone.deferred = []
        profiler = await profile("paced", variant, bridge.pid)
        cpu0, start = cpu_seconds(bridge.pid), time.monotonic()
        await fifo_write(fifo, lines, rate=args.rate)
        written = time.monotonic()
        done = None
        while time.monotonic() < written + args.timeout:
            count = delivered(metrics)
            if count is not None and count >= base + len(lines):
                done = time.monotonic()
                break
            await asyncio.sleep(0.01)
        cpu = cpu_seconds(bridge.pid) - cpu0
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(30)
        await wait_for(lambda: len(phone.deferred or []) >= len(lines), args.timeout)
        await phone.drain()
        await wait_for(lambda: all(line in phone.arrived for line in lines), args.timeout)
        paced = result("paced", lines, (done - start) if done else None, cpu, phone.arrived, phone.counts)
        paced["tail_ms"] = 1000 * (done - written) if done else None
        results.append(paced)

        # Replies: the phone's messages made first (its encryption is Python's, not timed)
        # and sent at once while the bridge is stopped (SIGSTOP), until the server answers
        # a ping sent after them: every one is then routed to the bridge's connection. The
        # bridge goes on (SIGCONT) and is timed until the socket local had them all: its
        # own throughput, not how fast this Python process writes or the server routes
        # bigger stanzas (both on the same two cores otherwise).
        # In rounds (--reply-rounds), each a sample of its own: a round takes only some
        # tens of milliseconds, so one alone says little.
        for index in range(args.reply_rounds):
            lines = [f"{variant}-{run}-r{index}-{i}" for i in range(args.replies)]
            prepared = [await phone.prepare(line, "home@example.test", variant == "required") for line in lines]
            profiler = await profile("replies", variant, bridge.pid) if index == 0 else None
            os.kill(bridge.pid, signal.SIGSTOP)
            try:
                server0 = cpu_seconds(args.server_pid) if args.server_pid else 0
                for stanza in prepared:
                    stanza.send()
                await phone.plugin["xep_0199"].ping(JID("example.test"), timeout=120)
                server_cpu = cpu_seconds(args.server_pid) - server0 if args.server_pid else None
                # Read while the bridge is stopped: after SIGCONT it runs on the other core at
                # once, and reading every thread's schedstat takes a while.
                cpu0, start = cpu_seconds(bridge.pid), time.monotonic()
            finally:
                os.kill(bridge.pid, signal.SIGCONT)
            await wait_for(lambda: all(line in sink.arrived for line in lines), args.timeout)
            if profiler:
                profiler.send_signal(signal.SIGINT)
                profiler.wait(30)
            done = max((sink.arrived[line] for line in lines if line in sink.arrived), default=None)
            cpu = cpu_seconds(bridge.pid) - cpu0
            replies = result("replies", lines, (done - start) if done else None, cpu, sink.arrived, sink.counts)
            replies["server_cpu_ms_per_msg"] = 1000 * server_cpu / len(lines) if server_cpu is not None else None
            results.append(replies)

        # Durable writes per message: a burst with strace counting fsync and fdatasync.
        if args.strace:
            out = Path(args.dir) / f"strace-{variant}-{run}.txt"
            tracer = subprocess.Popen(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-p", str(bridge.pid), "-o", str(out)], stderr=subprocess.DEVNULL)
            await asyncio.sleep(1.0)
            lines = [f"{variant}-{run}-s{i}" for i in range(args.n)]
            await fifo_write(fifo, lines)
            await wait_for(lambda: all(line in phone.arrived for line in lines), args.timeout)
            await asyncio.sleep(1.0)
            tracer.send_signal(signal.SIGINT)
            tracer.wait(10)
            calls = 0
            for row in out.read_text().splitlines():
                parts = row.split()
                if parts and parts[-1] in ("fsync", "fdatasync"):
                    calls += int(parts[3])
            results.append({"variant": variant, "run": run, "part": "durable", "n": len(lines), "durable_writes_per_msg": calls / len(lines)})

        # The marker: nothing of this variant's arrives after it.
        marker = f"{variant}-{run}-marker"
        await fifo_write(fifo, [marker])
        await wait_for(lambda: marker in phone.arrived, 60)
        for entry in results:
            if entry["part"] in ("burst", "paced"):
                prefix = "b" if entry["part"] == "burst" else "p"
                count = args.n if prefix == "b" else args.paced
                entry["twice"] = sum(max(0, phone.counts.get(f"{variant}-{run}-{prefix}{i}", 0) - 1) for i in range(count))
        # Counted once per variant and run: what the phone could not decrypt of it all.
        results.append({"variant": variant, "run": run, "part": "phone", "failed_decryptions": phone.failed - failed_before})
        sink.stop()
    finally:
        bridge.send_signal(signal.SIGTERM)
        try:
            bridge.wait(30)
        except subprocess.TimeoutExpired:
            bridge.kill()
        log.close()
    return results


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--paced", type=int, default=300)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--replies", type=int, default=500)
    parser.add_argument("--reply-rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--server-pid", type=int, help="the XMPP server's pid, for its CPU per message")
    args = parser.parse_args()
    phone = Phone("bob@example.test", Path(f"{args.dir}/bob.password").read_text().strip())
    phone.register_plugin("xep_0199")
    phone.register_plugin("xep_0380")
    phone.register_plugin("xep_0384", {"data_file": f"{args.dir}/phone.json"}, module=omemo_phone)
    import ssl
    phone.ssl_context = ssl.create_default_context(cafile=args.ca_file)
    online = asyncio.get_running_loop().create_future()

    async def started(_):
        phone.send_presence()
        await phone.get_roster()
        online.done() or online.set_result(True)

    phone.add_event_handler("session_start", started)
    phone.connect(host="127.0.0.1", port=args.port)
    await asyncio.wait_for(online, 30)
    results = []
    for run in range(args.runs):
        for variant in ("none", "required"):
            for result in await one_variant(args, phone, variant, run):
                print(json.dumps(result), flush=True)
                results.append(result)
    report(results)


def report(results):
    """The table: per part, the median over runs of each variant, and required / none."""
    def median(part, variant, key):
        values = [r[key] for r in results if r["part"] == part and r["variant"] == variant and r.get(key) is not None]
        return statistics.median(values) if values else None

    def total(part, variant, key):
        return sum(r.get(key, 0) for r in results if r["part"] == part and r["variant"] == variant)

    rows = [("burst", "cpu_ms_per_msg", "relay CPU per message (ms), burst"), ("burst", "throughput", "throughput (msg/s), burst, to the server"),
            ("paced", "cpu_ms_per_msg", "relay CPU per message (ms), paced"), ("paced", "tail_ms", "last taken after the last write (ms), paced"),
            ("replies", "cpu_ms_per_msg", "relay CPU per message (ms), replies"),
            ("replies", "throughput", "throughput (msg/s), replies"),
            ("burst", "server_cpu_ms_per_msg", "server CPU per message (ms), burst (not the bridge's)"),
            ("replies", "server_cpu_ms_per_msg", "server CPU per message (ms), replies (not the bridge's)"), ("durable", "durable_writes_per_msg", "durable writes (fsync+fdatasync) per message")]
    print("\n| measure | none | required | required / none |")
    print("| --- | --- | --- | --- |")
    for part, key, label in rows:
        none, required = median(part, "none", key), median(part, "required", key)
        if none is None or required is None:
            continue
        ratio = f"{required / none:.2f}×" if none else "-"
        print(f"| {label} | {none:.3f} | {required:.3f} | {ratio} |")
    for key, label, parts in (("lost", "lost", ("burst", "paced", "replies")), ("twice", "twice", ("burst", "paced", "replies")),
                              ("failed_decryptions", "failed decryptions", ("phone",))):
        counts = [sum(total(part, variant, key) for part in parts) for variant in ("none", "required")]
        print(f"| {label} (all parts, all runs) | {counts[0]} | {counts[1]} | |")


if __name__ == "__main__":
    asyncio.run(main())
