import Foundation
import Logging
import TransportCore

/// Turns lines read from a descriptor into messages for the bridge, one batch at a time
/// and in order; bad lines (too long, invalid UTF-8 under `reject`) are logged and skipped.
struct LineInputPump: Sendable {
    let transport: String
    let options: LocalInputOptions
    let handler: any TransportEventHandler
    let logger: Logger

    /// Reads `descriptor` until end of file (or until `reader` is stopped).
    func run(descriptor: Int32) async {
        await self.run(self.reader(for: descriptor))
    }

    func reader(for descriptor: Int32) -> FileLineReader {
        FileLineReader(
            descriptor: descriptor,
            splitter: LineSplitter(maxLineBytes: self.options.maxLineBytes, invalidUTF8: self.options.invalidUTF8)
        )
    }

    func run(_ reader: FileLineReader) async {
        let prefix = "\(self.transport)-\(UInt64(Date().timeIntervalSince1970 * 1000))"
        var counter = 0
        for await batch in reader.batches {
            reader.consumed()
            for line in batch {
                let body: String
                switch line {
                case .text(let text):
                    body = text
                case .repaired(let text):
                    self.logger.warning("input line had invalid UTF-8; relayed with U+FFFD in its place", metadata: ["message": "\(counter + 1)"])
                    body = text
                case .tooLong(let bytes):
                    self.logger.warning("input line dropped: longer than the limit", metadata: ["bytes": "\(bytes)", "limit": "\(self.options.maxLineBytes)"])
                    continue
                case .invalidUTF8:
                    self.logger.warning("input line dropped: invalid UTF-8")
                    continue
                }
                counter += 1
                let message = InboundMessage(
                    source: Endpoint(transport: self.transport), sender: self.options.nick, nick: self.options.nick,
                    id: "\(prefix)-\(counter)", body: body
                )
                let outcome = await self.handler.handle(.message(message), from: self.transport)
                if case .dropped(let reason) = outcome {
                    self.logger.debug("input line not relayed", metadata: ["reason": "\(reason)"])
                }
            }
        }
    }
}
