#!/usr/bin/env python3
"""Writes the Debian package's copyright file (machine-readable, copyright-format 1.0).

    scripts/package-copyright.py SCRATCH > copyright

SCRATCH is the release build's scratch path (scripts/package.sh's). Listed: xmpp-bridge
itself (GPL-3.0-or-later); every Swift package whose modules the binary links (read from
the link's object list, each module found in its package's checkout) with its licence
text and NOTICE; the Swift runtime, Foundation and Dispatch linked statically (the
toolchain's licence) and the ICU that Foundation carries. The C libraries (libxml2,
OpenSSL, SQLite, libpq, libomemo-c) are Debian packages with their own copyright files.
"""

import glob
import json
import os
import re
import shutil
import sys

APACHE = re.compile(r"Apache License\s+Version 2\.0", re.S)
MIT = re.compile(r"Permission is hereby granted, free of charge", re.S)


def field(text):
    """A text as a copyright-format field body: each line indented, blank lines as ' .'."""
    lines = text.strip("\n").splitlines()
    return "\n".join(" " + line.rstrip() if line.strip() else " ." for line in lines)


def linked_modules(scratch):
    link_list = os.path.join(scratch, "release", "xmpp-bridge.product", "Objects.LinkFileList")
    modules = set()
    with open(link_list) as file:
        for line in file:
            match = re.search(r"/([^/]+)\.build/", line.strip().strip("'\""))
            if match:
                modules.add(match.group(1))
    if not modules:
        raise SystemExit("no modules in " + link_list)
    return modules


def packages(scratch, modules):
    """(identity, version, location, path, module directories) of each checkout holding a
    linked module."""
    with open(os.path.join(scratch, "workspace-state.json")) as file:
        state = json.load(file)
    found = []
    for dependency in state["object"]["dependencies"]:
        path = os.path.join(scratch, "checkouts", dependency["subpath"])
        # Modules live in Sources/NAME, or in a top-level NAME (GRDB's).
        directories = glob.glob(os.path.join(path, "Sources", "*")) + glob.glob(os.path.join(path, "*"))
        linked = [d for d in directories if os.path.isdir(d) and os.path.basename(d) in modules]
        if linked:
            reference = dependency["packageRef"]
            version = dependency["state"].get("checkoutState", {}).get("version", "")
            found.append((reference["identity"], version, reference.get("location", ""), path, linked))
    return sorted(found)


def licence_files(path):
    top = [p for p in glob.glob(os.path.join(path, "*")) if re.match(r"(LICEN[CS]E|COPYING)", os.path.basename(p), re.I)]
    notices = [p for p in glob.glob(os.path.join(path, "NOTICE*"))]
    return sorted(top), sorted(notices)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()


def main():
    scratch = sys.argv[1]
    modules = linked_modules(scratch)
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: xmpp-bridge",
        "Comment:",
        field(
            "The binary links the Swift packages below and the Swift runtime statically (their\n"
            "licences follow). The C libraries it uses (libxml2, OpenSSL 3, SQLite, libpq,\n"
            "libomemo-c) are Debian packages with their own copyright files."
        ),
        "",
        "Files: *",
        "Copyright: 2025-2026 the xmpp-bridge authors",
        "License: GPL-3.0+",
        "",
    ]
    texts = {"GPL-3.0+": "This program is free software: you can redistribute it and/or modify it under\n"
             "the terms of the GNU General Public License as published by the Free Software\n"
             "Foundation, either version 3 of the License, or (at your option) any later version.\n\n"
             "On Debian systems, the full text of the GNU General Public License version 3 is in\n"
             "/usr/share/common-licenses/GPL-3.",
             "Apache-2.0": "On Debian systems, the full text of the Apache License, Version 2.0 is in\n"
             "/usr/share/common-licenses/Apache-2.0."}
    for identity, version, location, path, linked in packages(scratch, modules):
        licences, notices = licence_files(path)
        # Code a module carries from elsewhere, under its own licence (llhttp in NIO's).
        notices += sorted(p for d in linked for p in glob.glob(os.path.join(d, "**", "LICEN[CS]E*"), recursive=True))
        if not licences:
            raise SystemExit("no licence file in " + path)
        text = "\n".join(read(p) for p in licences)
        comment = "%s %s, %s" % (identity, version, location)
        if APACHE.search(text):
            name = "Apache-2.0"
            # Other licences some packages add to Apache's (the parts they carry).
            extra = text[APACHE.search(text).end():]
            tail = re.split(r"END OF TERMS AND CONDITIONS", extra, maxsplit=1)
            if len(tail) == 2 and re.search(r"\S", re.sub(r"APPENDIX:.*?limitations under the License\.", "", tail[1], flags=re.S)):
                comment += "\n\nMore licence terms in this package:\n" + tail[1].strip()
        elif MIT.search(text):
            name = "Expat-" + identity
            texts[name] = text
        else:
            name = "Other-" + identity
            texts[name] = text
        for notice in notices:
            comment += "\n\n" + os.path.relpath(notice, path) + ":\n" + read(notice)
        out += ["Files: .build/checkouts/%s/*" % os.path.basename(path), "Copyright: see its licence and notice below",
                "License: " + name, "Comment:", field(comment), ""]
    # The Swift runtime, Foundation and Dispatch, linked statically, from the toolchain.
    swift = shutil.which("swift")
    toolchain = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(swift)), "..", "share", "swift", "LICENSE.txt"))
    # Apache-2.0 (in common-licenses) and the Runtime Library Exception after its terms.
    exception = re.split(r"END OF TERMS AND CONDITIONS", read(toolchain), maxsplit=1)[-1]
    exception = re.sub(r"APPENDIX:.*?limitations under the License\.", "", exception, flags=re.S).strip()
    texts["Apache-2.0-with-Swift-exception"] = texts["Apache-2.0"] + "\n\n" + exception
    out += ["Files: (the Swift toolchain's static runtime: swiftCore, Concurrency, Foundation, Dispatch)",
            "Copyright: Apple Inc. and the Swift project authors",
            "License: Apache-2.0-with-Swift-exception", ""]
    icu = sorted(glob.glob("/usr/share/doc/libicu[0-9]*/copyright"))
    if not icu:
        raise SystemExit("no ICU copyright file (libicu, a dependency of libxml2-dev) to take ICU's licence from")
    stanza = re.search(r"^License: \S+\n((?: .*\n)+)", read(icu[0]), re.M)
    out += ["Files: (ICU, in the Swift toolchain's static Foundation: _FoundationICU)",
            "Copyright: Unicode, Inc. and others",
            "License: ICU", stanza.group(1).rstrip("\n"), ""]
    for name, text in texts.items():
        out += ["License: " + name, field(text), ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
