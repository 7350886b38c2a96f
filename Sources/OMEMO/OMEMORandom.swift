import XMPP

/// Random bytes and ids for OMEMO (keys, IVs, device and prekey ids), from OpenSSL's
/// random source through the XMPP library's one owner of it.
enum OMEMORandom {
    static func bytes(_ count: Int) throws(OMEMOError) -> [UInt8] {
        do {
            return try OpenSSLCrypto.randomBytes(count: count)
        } catch {
            throw OMEMOError("draw random bytes", reason: "\(error)")
        }
    }

    /// A pick in `range` from 32 random bits (a modulo: each id is at most one draw in 2³² more likely than another).
    static func id(in range: ClosedRange<UInt32>) throws(OMEMOError) -> UInt32 {
        let value = try Self.bytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return range.lowerBound + UInt32((UInt64(value) % (UInt64(range.upperBound - range.lowerBound) + 1)))
    }
}
