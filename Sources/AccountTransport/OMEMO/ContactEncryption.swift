/// How messages to a contact are sent (issue 41: a member's `encryption`): OMEMO
/// (XEP-0384 v0.3 §5) when it can, always, or never.
public enum ContactEncryption: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Never encrypted.
    case none
    /// Encrypted with OMEMO when the contact has a trusted device, else as plaintext.
    case omemo
    /// Never as plaintext: a delivery waits until the contact has a trusted device.
    case required

    /// Stricter is greater: a contact in several channels gets the strictest.
    public static func < (lhs: ContactEncryption, rhs: ContactEncryption) -> Bool {
        lhs.rank < rhs.rank
    }

    private var rank: Int {
        switch self {
        case .none: 0
        case .omemo: 1
        case .required: 2
        }
    }
}
