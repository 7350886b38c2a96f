import COpenSSL

/// Drains OpenSSL's per-thread error queue into strings (oldest first).
enum OpenSSLErrorStack {
    static func drain() -> [String] {
        var errors: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            errors.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return errors
    }

    /// Discards anything left in the queue, so an old error is not blamed on a new call.
    static func clear() {
        ERR_clear_error()
    }
}
