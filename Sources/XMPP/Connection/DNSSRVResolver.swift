import CXMPPShims
import NIOCore
import NIOPosix

/// Looks up SRV records with the system resolver (`res_query`), off the event loop
/// (RFC 2782; RFC 6120 §3.2.1). The blocking C call is confined to this file.
public struct DNSSRVResolver: Sendable {
    private let threadPool: NIOThreadPool

    public init(threadPool: NIOThreadPool = .singleton) {
        self.threadPool = threadPool
    }

    /// The SRV records for `name` (e.g. `_xmpp-client._tcp.example.org`); empty when none
    /// exist. A lone record with target `.` (empty here) means "no such service" (RFC 2782).
    public func lookup(_ name: String) async throws -> [SRVRecord] {
        let answer = try await self.threadPool.runIfActive { () -> [UInt8]? in
            var buffer = [UInt8](repeating: 0, count: 65_535)
            let length = CXMPPShims_res_query(name, 1 /* C_IN */, 33 /* T_SRV */, &buffer, Int32(buffer.count))
            guard length > 0 else { return nil }
            return Array(buffer.prefix(Int(length)))
        }
        guard let answer else { return [] }
        return try DNSResponseParser.srvRecords(from: answer)
    }
}
