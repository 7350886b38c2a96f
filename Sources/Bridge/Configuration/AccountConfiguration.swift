import OMEMO
import XMPP

/// One `[accounts.NAME]` table of `bridge.toml`: an XMPP account the bridge logs in to.
package struct AccountConfiguration: Sendable {
    package var name: String
    package var client: XMPPClientConfiguration
    package var password: PasswordSource
    package var subscriptionPolicy: SessionStateMachine<ContinuousClock.Instant>.SubscriptionPolicy
    /// The largest stanza the account's server takes (bytes, after escaping); longer
    /// deliveries are split into parts (default 64 KiB).
    package var maxStanzaBytes: Int = 65_536
    /// Use stream management (XEP-0198) when the server offers it: deliveries are taken
    /// by the server's acknowledgements, and received messages are acknowledged only once
    /// they are committed (default true).
    package var streamManagement: Bool = true
    /// After a gap in the stream (restart, a session that could not be resumed), fetch
    /// what was missed from the account's message archive (XEP-0313); default true
    /// (`catch_up = "mam"`), a no-op where the server keeps no archive.
    package var catchUp: Bool = true
    /// Archived messages older than this are not relayed by a catch-up; nil: no limit.
    package var catchUpMaxAge: Duration? = .seconds(7 * 86_400)
    /// Self-ping a quiet room after `pingInterval` (`room_ping_interval`); rejoin after a
    /// kick after `rejoinAfterKick` (`room_rejoin_delay`). XEP-0410, XEP-0045.
    package var roomTimings = RoomTimings()
    /// While deliveries are unacknowledged (XEP-0198), the server's acknowledgement must
    /// come within this (`ack_timeout`, default 5 s), or the connection is dropped and
    /// resumed; "unlimited": off.
    package var acknowledgementTimeout: Duration = .seconds(5)
    /// The account's nick and avatar (`nick`, `avatar`; issue 25): published at login when
    /// they changed, the nick also in every message the account sends.
    package var profile = OwnProfile()
    /// The account is an OMEMO device (`omemo`, issue 41): it publishes its device and
    /// bundle, decrypts what arrives and encrypts to contacts per their `encryption`.
    package var omemo = false
    /// `omemo_trust`: whose new keys are trusted without verification.
    package var omemoTrust = OMEMOTrust.Policy.blind

    /// `login`: SASL2 (XEP-0388) with Bind 2 and FAST where the server offers them
    /// (`auto`, the default), or RFC 6120's SASL and bind only (`legacy`).
    package var login = LoginPolicy.auto

    /// How the account logs in.
    package enum LoginPolicy: String, Sendable, CaseIterable {
        case auto
        case legacy
    }

    /// Bind 2 (XEP-0386) binds a resource the server names, and ejabberd then drops the
    /// offline messages it holds, trusting the archive: only for an account with no
    /// resource of its own that catches up from the archive and relays no OMEMO (whose
    /// key exchanges are not archived).
    package var bindsInline: Bool {
        self.client.jid.resourcepart == nil && self.catchUp && !self.omemo
    }

    package static let keys = [
        "jid", "resource", "password_file", "password_env", "password_command", "host", "port", "tls", "ca_file", "insecure",
        "subscription_policy", "max_stanza_bytes", "stream_management",
        "catch_up", "catch_up_max_age", "room_ping_interval", "room_rejoin_delay", "ack_timeout", "nick", "avatar",
        "omemo", "omemo_trust", "login",
    ]
}
