"""The relay benchmark's report (load.py report RESULTS.jsonl): the table of every path
and the ratios each issue's Measure asks for, from the JSON lines `load.py run` printed."""
import json
import statistics


def report(path):
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    groups = {}
    for row in rows:
        groups.setdefault((row["variant"], row["label"], row["mode"]), []).append(row)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    labels = ["direct", "bridge", "bot", "bridge-memory", "bridge-ping", "bridge-noarchive", "bridge-postgres", "pair-archive", "pair-noarchive"]
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
    # The direct+… paths (what each element costs the server) get rows too, after the rest.
    labels += sorted({label for (_, label, _) in groups if label.startswith("direct+")})
    for variant in variants:
        for label in labels:
            t, lat = pick(variant, label, "throughput"), pick(variant, label, "latency")
            if t is None and lat is None:
                continue
            d50, d99 = get(variant, "direct", "latency", "lat_p50_ms"), get(variant, "direct", "latency", "lat_p99_ms")
            relay = not label.startswith("direct")
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
        sb, sbot = g("bridge", "throughput", "server_cpu_us_per_msg"), g("bot", "throughput", "server_cpu_us_per_msg")
        io = lambda label: f"{fmt(g(label, 'throughput', 'server_reads_per_msg'), 2)} reads, {fmt(g(label, 'throughput', 'server_writes_per_msg'), 2)} writes"
        print(f"  server CPU/msg bridge/bot {fmt(ratio(sb, sbot), 2)}x  throughput run ({fmt(sb)} vs {fmt(sbot)} µs; issue 43 goal <= 1.2x);"
              f" server per msg: bridge {io('bridge')}, bot {io('bot')}")
        extras = sorted({label for (v, label, mode) in groups if v == variant and label.startswith("direct+")})
        if extras:
            sd = g("direct", "throughput", "server_cpu_us_per_msg")
            costs = ", ".join(f"{label[7:]} +{fmt(sub(g(label, 'throughput', 'server_cpu_us_per_msg'), sd))}" for label in extras)
            print(f"  server CPU/msg over the direct path's {fmt(sd)} µs (issue 43; sm: a receiver with stream management;"
                  f" letters: elements R relay marker, O origin-id, Q receipt request, M markable, S store hint): {costs} µs")
        print(f"  added latency, bridge     p50 {fmt(sub(b50, d50), 2)} ms, p99 {fmt(sub(b99, d99), 2)} ms"
              f"  (bot: {fmt(sub(o50, d50), 2)} / {fmt(sub(o99, d99), 2)}; in-memory bridge: {fmt(sub(m50, d50), 2)} / {fmt(sub(m99, d99), 2)})")
        if not rooms or tm is not None:
            print(f"  durable queue cost        {fmt(cost, 1)} % throughput  (durable {fmt(tb)} vs in-memory {fmt(tm)} msg/s)")
        def sched(label, mode):
            """Each run's relay CPU per message from the threads' schedstat (µs), in run order."""
            return [r.get("relay_sched_cpu_us_per_msg") for r in groups.get((variant, label, mode), [])]

        tn = g("bridge-noarchive", "throughput", "msgs_per_s")
        if tn is not None:
            # CPU per message from the threads' schedstat (nanoseconds), the median over every
            # throughput repeat: the 10 ms ticks of /proc/PID/stat are too coarse for a 10 % bar.
            def cpu(label, mode):
                values = [v for v in sched(label, mode) if v is not None]
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
            on, off = sched(on_label, mode), sched(off_label, mode)
            ratios = sorted(a / b for a, b in zip(on, off) if a and b)
            if not ratios:
                return None
            return (f"{statistics.median(ratios):.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f}, {len(ratios)} pairs;"
                    f" median {statistics.median([v for v in on if v]):.1f} vs {statistics.median([v for v in off if v]):.1f} µs)")
        for on_label, off_label, what in (("bridge", "bridge-noarchive", "runs one after the other"), ("pair-archive", "pair-noarchive", "both at once")):
            t, p = paired(on_label, off_label, "throughput"), paired(on_label, off_label, "latency")
            if t or p:
                print(f"  archive on/off, pair by pair ({what}; goal <= 1.10x): tput {t or '-'}, paced {p or '-'}")
        postgres = paired("bridge-postgres", "bridge", "throughput")
        rates = lambda label: [r.get("msgs_per_s") for r in groups.get((variant, label, "throughput"), [])]
        throughputs = sorted(a / b for a, b in zip(rates("bridge-postgres"), rates("bridge")) if a and b)
        if postgres and throughputs:
            print(f"  PostgreSQL/SQLite state (issue 26, goal >= 0.5x throughput): throughput {statistics.median(throughputs):.2f}x"
                  f" (range {throughputs[0]:.2f}-{throughputs[-1]:.2f}, {len(throughputs)} pairs); relay CPU/msg {postgres}")
        tp, cp, pp = g("bridge-ping", "throughput", "msgs_per_s"), g("bridge-ping", "throughput", "relay_cpu_us_per_msg"), g("bridge-ping", "latency", "relay_cpu_us_per_msg")
        p50, p99 = g("bridge-ping", "latency", "lat_p50_ms"), g("bridge-ping", "latency", "lat_p99_ms")
        if tp is not None:
            print(f"  SM acks vs ping (issue 9) throughput {fmt(ratio(tb, tp), 2)}x ({fmt(tb)} vs {fmt(tp)} msg/s); CPU/msg"
                  f" {fmt(ratio(cb, cp), 2)}x tput ({fmt(cb)} vs {fmt(cp)} µs), {fmt(ratio(pb, pp), 2)}x paced ({fmt(pb)} vs {fmt(pp)} µs);"
                  f" added p50 {fmt(sub(b50, d50), 2)} vs {fmt(sub(p50, d50), 2)} ms, p99 {fmt(sub(b99, d99), 2)} vs {fmt(sub(p99, d99), 2)} ms")
