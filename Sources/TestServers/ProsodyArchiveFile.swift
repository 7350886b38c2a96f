import Foundation
import ThrowawayProsody

/// What a Prosody message archive holds on disk: its internal storage keeps one `.list`
/// file per user (or room) and store, each item a Lua table appended as written
/// (`datamanager.list_append`: the file is closed after each item, so a SIGKILL keeps it).
/// The tests read the bodies back to tell a message the server lost from one the bridge
/// lost; this reads every Lua string literal in the file (a body is one of them).
public enum ProsodyArchiveFile {
    /// Every string literal in `data`, decoded (`\ddd` decimal bytes and the C escapes
    /// Prosody's `util.serialization` writes).
    public static func strings(in data: [UInt8]) -> Set<String> {
        var found: Set<String> = []
        var index = 0
        while index < data.count {
            guard data[index] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            index += 1
            var bytes: [UInt8] = []
            while index < data.count, data[index] != UInt8(ascii: "\"") {
                if data[index] == UInt8(ascii: "\\"), index + 1 < data.count {
                    index += 1
                    let escaped = data[index]
                    if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(escaped) {
                        var value = 0
                        var digits = 0
                        while digits < 3, index < data.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(data[index]) {
                            value = value * 10 + Int(data[index] - UInt8(ascii: "0"))
                            index += 1
                            digits += 1
                        }
                        bytes.append(UInt8(truncatingIfNeeded: value))
                        continue
                    }
                    bytes.append(Self.unescaped[escaped] ?? escaped)
                } else {
                    bytes.append(data[index])
                }
                index += 1
            }
            index += 1
            found.insert(String(decoding: bytes, as: UTF8.self))
        }
        return found
    }

    private static let unescaped: [UInt8: UInt8] = [
        UInt8(ascii: "a"): 7, UInt8(ascii: "b"): 8, UInt8(ascii: "f"): 12, UInt8(ascii: "n"): 10,
        UInt8(ascii: "r"): 13, UInt8(ascii: "t"): 9, UInt8(ascii: "v"): 11,
    ]
}

extension ProsodyServer {
    /// The bodies (with every other string) in `owner`'s archive: a user's localpart on
    /// ``domain`` (stores `archive` and Prosody 13's `archive2` where present), or a room's
    /// bare JID on ``mucDomain`` (store `muc_log`). nil when the server keeps no archive.
    public func archivedBodies(of owner: String) throws -> Set<String>? {
        guard self.options.archive || self.options.rooms else { return nil }
        let parts = owner.split(separator: "@", maxSplits: 1).map(String.init)
        let (node, host) = parts.count == 2 ? (parts[0], parts[1]) : (owner, self.options.domain)
        let stores = host == self.mucDomain ? ["muc_log"] : ["archive", "archive2"]
        var bodies: Set<String> = []
        for store in stores {
            let path = "\(self.directory)/data/\(Self.storageName(host))/\(store)/\(Self.storageName(node)).list"
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            bodies.formUnion(ProsodyArchiveFile.strings(in: [UInt8](data)))
        }
        return bodies
    }
}
