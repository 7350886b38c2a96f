import BridgeState
import Foundation
import XMPP

/// An account's login state between the state's form (``StoredLogin``, which knows no
/// XMPP) and the XMPP library's (``LoginStateKeeper/Stored``). A token whose mechanism this
/// build does not know is left out: the next login asks for a new one.
extension LoginStateKeeper.Stored {
    init(_ stored: StoredLogin) {
        self.init(
            userAgentID: stored.userAgentID,
            token: stored.token.flatMap { token in
                HashedTokenMechanism(rawValue: token.mechanism).map { FASTToken(secret: token.secret, expiry: token.expiry, mechanism: $0) }
            },
            passwordCheck: stored.token?.passwordCheck
        )
    }
}

extension StoredLogin {
    init(_ stored: LoginStateKeeper.Stored) {
        self.init(
            userAgentID: stored.userAgentID,
            token: stored.token.map { Token(secret: $0.secret, mechanism: $0.mechanism.rawValue, expiry: $0.expiry, passwordCheck: stored.passwordCheck ?? "") }
        )
    }
}
