"""Fills an xmpp-bridge state database's archive (issue 25) with N messages for
Benchmarks/relay/history.sh: chat-like text over a vocabulary with a Zipf distribution
(so some words are in most messages and most words in few), in three channels, one a
second back from now. Rows go into the archive table, then into its FTS5 index ten thousand
at a time, as the bridge indexes them. Prints how many messages hold each of the
words the benchmark searches for, as JSON."""
import argparse
import json
import random
import sqlite3
import time

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "xi", "zu", "ba", "de", "fo", "gi", "hu", "ja", "pe", "qu", "wi", "yo"]


def vocabulary(size, rng):
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("-n", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(20_000, rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    cumulative = []
    total = 0.0
    for weight in weights:
        total += weight
        cumulative.append(total)
    now_ms = int(time.time() * 1000)
    db = sqlite3.connect(args.database)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")

    def rows():
        for index in range(args.n):
            text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(4, 20)))
            if index % 1000 == 0:
                text += " disk full on db1"
            channel = ("ops", "dev", "alerts")[index % 3]
            sender = f"user{index % 50}@example.org"
            yield (now_ms - (args.n - index) * 1000, channel, "work", sender, sender + "/phone", f"user{index % 50}", f"m-{index}", text)

    db.executemany(
        "INSERT INTO archive (at, channel, source_transport, source_address, sender, nick, source_id, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows(),
    )
    db.commit()
    # The bridge's own batch indexing (StateStore.indexArchive), ten thousand at a time.
    while True:
        through = db.execute("SELECT through FROM archive_indexed").fetchone()[0]
        last = db.execute("SELECT MAX(id) FROM archive WHERE id <= ?", (through + 10000,)).fetchone()[0]
        if last is None or last <= through:
            break
        db.execute("INSERT INTO archive_text (rowid, body) SELECT id, body FROM archive WHERE id > ? AND id <= ? ORDER BY id", (through, last))
        db.execute("UPDATE archive_indexed SET through = ?", (last,))
        db.commit()
    counts = {}
    for word in (words[0], words[10], words[200], words[5000], "disk", "full"):
        counts[word] = db.execute("SELECT COUNT(*) FROM archive_text WHERE archive_text MATCH ?", (f'"{word}"',)).fetchone()[0]
    print(json.dumps({"messages": args.n, "hits": counts, "common": words[0], "frequent": words[10], "medium": words[200], "rare": words[5000]}))


if __name__ == "__main__":
    main()
