#!/usr/bin/env python3
"""Writes bridge.toml(5), the configuration file's manual page, from bridge.toml.example.

The example shows every key the loader accepts, each under the comment that explains it
(a test holds the two together: ConfigurationKeysTests), so the manual is made from it and
cannot drift from either. Usage:

    scripts/bridge-toml-manual.py bridge.toml.example VERSION DATE > bridge.toml.5

The example's layout, as read here: a comment block right above a [table] header tells
what the table is; a comment block right above a key (set, or commented out as "#key =" or
"# key =") tells what the key is; a key's trailing "# ..." comment adds to that; a blank
line ends a block; an empty "#" line starts a new paragraph; a comment line indented by
two spaces or more is shown as it stands (an example, a list).
"""

import re
import sys

HEADER = re.compile(r"^\s*(\[\[?[A-Za-z0-9_.-]+\]\]?)\s*$")
KEY = re.compile(r"^([a-z0-9_]+)\s*=\s*(.*)$")
# A key commented out: "#key = value" or "# key = value", the value a TOML one.
COMMENTED_KEY = re.compile(r"^#\s?([a-z0-9_]+) = ([\"'\[{0-9]|true|false)(.*)$")
# Characters the manual writes as groff names, so every terminal shows them.
GLYPHS = {"\u2014": r"\(em", "\u2026": "...", "\u2192": r"\(->", "\U0001F525": "(fire)", "\u2705": "(check mark)"}


def roff(text):
    """Escapes one line of text for groff."""
    text = text.replace("\\", r"\e")
    text = "".join(GLYPHS.get(c, c if ord(c) < 128 else r"\[u%04X]" % ord(c)) for c in text)
    if text.startswith((".", "'")):
        text = r"\&" + text
    return text


def split_value(value):
    """A key's value and its trailing comment, if any (a '#' outside a string)."""
    quote = None
    for index, c in enumerate(value):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return value[:index].rstrip(), value[index + 1:].strip()
    return value.rstrip(), ""


class Manual:
    def __init__(self):
        self.out = []
        self.block = []  # the pending comment lines, without their "#"

    def emit(self, *lines):
        self.out.extend(lines)

    def prose(self, lines):
        """Comment lines as paragraphs; indented lines as they stand."""
        preformatted = False
        paragraph_open = False
        for line in lines:
            if line.strip() == "":
                if preformatted:
                    self.emit(".fi")
                    preformatted = False
                paragraph_open = False
                continue
            indented = line.startswith("  ")
            if indented and not preformatted:
                self.emit(".PP" if not paragraph_open else ".br", ".nf")
                preformatted = True
            elif not indented and preformatted:
                self.emit(".fi")
                preformatted = False
                paragraph_open = False
            if not indented and not paragraph_open:
                self.emit(".PP")
                paragraph_open = True
            self.emit(roff(line.strip() if not indented else line))
        if preformatted:
            self.emit(".fi")

    def take_block(self):
        block, self.block = self.block, []
        while block and block[-1].strip() == "":
            block.pop()
        return block

    def flush(self):
        block = self.take_block()
        if block:
            self.prose(block)

    def key(self, name, value, extra, description):
        value, trailing = split_value(value)
        self.emit(".TP", r"\fB%s\fR = %s" % (roff(name), roff(value)))
        lines = description + ([trailing] if trailing else [])
        first = True
        for line in lines:
            if line.strip() == "":
                self.emit(".IP")
                continue
            self.emit(roff(line.strip()) if not line.startswith("  ") or first else ".br\n" + roff(line))
            first = False
        if extra:
            self.emit(".IP", ".nf")
            self.emit(*[roff(line) for line in extra])
            self.emit(".fi")


def main():
    example, version, date = sys.argv[1:4]
    with open(example, encoding="utf-8") as file:
        lines = file.read().splitlines()
    manual = Manual()
    manual.emit(
        r'.TH BRIDGE.TOML 5 "%s" "xmpp-bridge %s" "File Formats"' % (date, roff(version)),
        ".SH NAME",
        r"bridge.toml \- configuration of xmpp-bridge(1)",
        ".SH SYNOPSIS",
        r"\fI/etc/xmpp-bridge/bridge.toml\fR",
        ".SH DESCRIPTION",
    )
    index = 0
    started = False
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        header = HEADER.match(line)
        if header:
            block = manual.take_block()
            manual.emit(".SH " + roff(header.group(1)))
            manual.prose(block)
            started = True
            continue
        if line == "":
            if not started or manual.block:
                manual.flush()
            continue
        if line.startswith("#"):
            commented = COMMENTED_KEY.match(line)
            if commented and started:
                manual.key(commented.group(1), commented.group(2) + commented.group(3), [], manual.take_block())
                continue
            manual.block.append(line[2:] if line.startswith("# ") else line[1:])
            continue
        key = KEY.match(line)
        if not key:
            raise SystemExit("%s:%d: not a key, header or comment: %s" % (example, index, line))
        name, value = key.groups()
        extra = []
        if value.strip() == "[":
            # A multi-line array, to its closing "]".
            while index < len(lines) and lines[index].rstrip() != "]":
                extra.append(lines[index].rstrip())
                index += 1
            extra.append("]")
            index += 1
        manual.key(name, value, extra, manual.take_block())
    manual.flush()
    manual.emit(
        ".SH FILES",
        ".TP",
        r"\fI/etc/xmpp-bridge/bridge.toml\fR",
        "The service's configuration (the Debian package's conffile, made from the example).",
        ".TP",
        r"\fI/usr/share/doc/xmpp-bridge/examples/bridge.toml.example\fR",
        "The example this page is made from: every key with its default or an example value.",
        ".SH SEE ALSO",
        r"\fBxmpp-bridge\fR(1), \fBsystemd.service\fR(5)",
    )
    sys.stdout.write("\n".join(manual.out) + "\n")


if __name__ == "__main__":
    main()
