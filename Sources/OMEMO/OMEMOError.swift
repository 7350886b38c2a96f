/// Why an OMEMO operation (XEP-0384) failed: the operation and libomemo-c's error code
/// (`SG_ERR_*`, negative), or a reason of our own.
public struct OMEMOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done ("create the context", "sign", …).
    public var operation: String
    /// libomemo-c's code; nil when the failure is ours (bad input).
    public var code: Int32?
    /// What was wrong, for a failure of ours.
    public var reason: String?

    public init(_ operation: String, code: Int32? = nil, reason: String? = nil) {
        self.operation = operation
        self.code = code
        self.reason = reason
    }

    public var description: String {
        var text = "OMEMO: could not \(self.operation)"
        if let code { text += " (libomemo-c error \(code))" }
        if let reason { text += ": \(reason)" }
        return text
    }
}
